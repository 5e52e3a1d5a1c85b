import type { ClickHouseClientConfigOptions } from '@clickhouse/client';
// The function the HTTP client formats each `param_<name>` with (the package has no export map; version pinned).
import { formatQueryParams } from '@clickhouse/client/dist/common/data_formatter/format_query_params.js';
import { Lender, untilAborted } from '../abortable.ts';

/** The Connection contract `createClient({ connection })` takes (chdb implements it). */
export type ClientConnection = NonNullable<ClickHouseClientConfigOptions['connection']>;

type Statement = { readonly query: string; readonly query_params?: Record<string, unknown> };

const PARAM_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const PLACEHOLDER = /\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*:/g;

/** How the reads of a pool are waiting: for the metrics, and for what cancellation shows. */
export interface ReadQueue {
  /** Statements waiting for a connection now. */
  readonly waiting: number;
  /** Statements on a connection now. */
  readonly running: number;
  /** Statements withdrawn from the wait because their request's client went away, since the start. */
  readonly withdrawn: number;
}

/**
 * chdb connections to one data folder behind the one Connection a client takes. One chdb connection runs
 * one statement at a time; same-folder connections run side by side, each statement on an idle one, and a
 * statement finding none waits for the next in order. A statement whose `abort_signal` aborts while it
 * waits leaves the queue at once and never runs. One already running cannot be stopped: chdb has no
 * query ids and its C interface no interrupt (`KILL QUERY` finds nothing), so its caller is answered at
 * once while the statement runs on to its end (bounded by the reads' max_execution_time), keeping its
 * connection until then; the signal is not handed to chdb, which would give the connection back early.
 * A result is read whole before its connection goes back (chdb materializes every result), so nothing
 * outlives the statement. Each running statement holds one of Node's libuv worker threads.
 */
export function chdbConnectionPool(connections: readonly ClientConnection[]): ClientConnection & {
  readonly queue: ReadQueue;
} {
  const lender = new Lender(connections);
  const on = <P extends { abort_signal?: AbortSignal }, T>(
    params: P,
    run: (connection: ClientConnection, params: P) => Promise<T>,
  ): Promise<T> => {
    const { abort_signal: signal, ...rest } = params;
    const running = lender.with(signal, (connection) => run(connection, rest as P));
    return untilAborted(running, signal);
  };
  return {
    ping: (params) => on(params, (connection, p) => connection.ping(p)),
    query: (params) => on(params, (connection, p) => connection.query(withSessionParams(p))),
    command: (params) => on(params, (connection, p) => connection.command(withSessionParams(p))),
    exec: (params) => on(params, (connection, p) => connection.exec(withSessionParams(p))),
    insert: (params) => on(params, (connection, p) => connection.insert(p)),
    close: async () => {
      const closed = await lender.close(new Error('the chdb connection pool is closed'));
      await Promise.all(closed.map((connection) => connection.close()));
    },
    queue: {
      get waiting() {
        return lender.waiting;
      },
      get running() {
        return lender.lent;
      },
      get withdrawn() {
        return lender.withdrawn;
      },
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
