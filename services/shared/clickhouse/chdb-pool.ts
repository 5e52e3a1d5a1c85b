import type { ClickHouseClientConfigOptions } from '@clickhouse/client';
// The function the HTTP client formats each `param_<name>` with (the package has no export map; version pinned).
import { formatQueryParams } from '@clickhouse/client/dist/common/data_formatter/format_query_params.js';
import { createPool } from 'generic-pool';

/** The Connection contract `createClient({ connection })` takes (chdb implements it). */
export type ClientConnection = NonNullable<ClickHouseClientConfigOptions['connection']>;

type Statement = { readonly query: string; readonly query_params?: Record<string, unknown> };

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:/g;

/**
 * chdb connections to one data folder behind the one Connection a client takes. One chdb connection runs
 * one statement at a time; same-folder connections run side by side, each statement on an idle one, and a
 * statement finding none waits for the next in order (generic-pool). A result is read whole before its
 * connection goes back (chdb materializes every result), so nothing outlives the statement. Each running
 * statement holds one of Node's libuv worker threads (UV_THREADPOOL_SIZE).
 */
export function chdbConnectionPool(connections: readonly ClientConnection[]): ClientConnection {
  const unused = [...connections];
  const pool = createPool<ClientConnection>(
    {
      // Opened by the caller, so that a folder the engine cannot open fails the start rather than a
      // query; with no eviction or validation the pool destroys one only when it is cleared.
      create: async () => {
        const connection = unused.pop();
        if (connection === undefined) throw new Error('the chdb connection pool has no connection left to open');
        return connection;
      },
      destroy: (connection) => connection.close(),
    },
    { max: connections.length, min: connections.length },
  );
  // Not pool.use(), which destroys a connection whose statement failed: a refused statement leaves a
  // chdb connection as good as before, and the pool has no other to open.
  const on = async <T>(run: (connection: ClientConnection) => Promise<T>): Promise<T> => {
    const connection = await pool.acquire();
    try {
      return await run(connection);
    } finally {
      await pool.release(connection);
    }
  };
  return {
    ping: (params) => on((connection) => connection.ping(params)),
    query: (params) => on((connection) => connection.query(withSessionParams(params))),
    command: (params) => on((connection) => connection.command(withSessionParams(params))),
    exec: (params) => on((connection) => connection.exec(withSessionParams(params))),
    insert: (params) => on((connection) => connection.insert(params)),
    close: async () => {
      await pool.drain();
      await pool.clear();
    },
  };
}

/**
 * A statement's server-side parameters as `SET param_<name> = '<text>'` before it, instead of chdb's
 * parameter binding. chdb runs every statement with bound parameters through one chain for the whole
 * process (its native binding is not isolated per connection), so those statements would run one at a
 * time whatever connection they are on. A `param_` setting is the same parameter (the engine parses the
 * same text, as the placeholder's type, that an HTTP server gets as `param_<name>`) and lives in the
 * connection's own session. Since it outlives the statement, a placeholder without a value of its own is
 * refused here, as a server would refuse it, rather than read the previous statement's value.
 */
export function withSessionParams<P extends Statement>(params: P): P {
  const values = params.query_params ?? {};
  for (const [, name] of params.query.matchAll(PLACEHOLDER)) {
    if (!Object.hasOwn(values, name!)) throw new Error(`query parameter ${name} is not set`);
  }
  const names = Object.keys(values);
  if (names.length === 0) return params;
  const sets = names
    .map((name) => {
      if (!PARAM_NAME.test(name)) throw new Error(`query parameter name ${JSON.stringify(name)} is not an identifier`);
      return `SET param_${name} = ${sqlString(formatQueryParams({ value: values[name] }))}; `;
    })
    .join('');
  // A value is now statement text, which the parser bounds (max_query_size, 256 KiB by default), where a
  // server bounds only the query: thousands of event ids would be refused. The limit is raised first.
  const bytes = Buffer.byteLength(sets) + Buffer.byteLength(params.query);
  const limit = bytes > DEFAULT_MAX_QUERY_SIZE ? `SET max_query_size = ${bytes + 1024}; ` : '';
  return { ...params, query: `${limit}${sets}${params.query}`, query_params: undefined };
}

const DEFAULT_MAX_QUERY_SIZE = 262_144;

/** A ClickHouse string literal: the backslash and the quote are the only characters that end or escape one. */
export function sqlString(text: string): string {
  return `'${text.replace(/[\\']/g, (c) => `\\${c}`)}'`;
}
