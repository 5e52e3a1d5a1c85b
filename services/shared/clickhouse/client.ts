import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import type { Config } from '../config.ts';
import { chdbConnectionPool, type ClientConnection, type ReadQueue } from './chdb-pool.ts';
import { embeddedEngineArguments } from './embedded-engine.ts';

export type { ClickHouseClient };

export interface ClickHouse {
  readonly client: ClickHouseClient;
  /** The database every statement names explicitly (the embedded engine ignores a client default). */
  readonly database: string;
  readonly embedded: boolean;
  /** CLICKHOUSE_CLUSTER: statements read and write the Distributed tables (tables.ts); null: one server. */
  readonly cluster: string | null;
  /** The embedded engine's statements waiting for one of the handle's connections; absent over HTTP. */
  readonly queue?: ReadQueue;
  /** Subqueries read in place of tables (by TABLES key): an as-of read's (services/query/as-of.ts). */
  readonly overrides?: ReadonlyMap<string, string>;
}

// Money is read as quoted decimals so that it never passes through a JS number.
const SETTINGS = { output_format_json_quote_decimals: 1, output_format_json_quote_64bit_integers: 1 } as const;

/**
 * With CLICKHOUSE_URL: HTTP to a server. Without it: the embedded engine through chdb's
 * connection for the same client, so the same SQL runs on both. The embedded engine allows one
 * data folder per process, and only one process may use a folder at a time.
 */
export async function createClickHouse(config: Pick<Config, 'clickhouse' | 'dataDir'>): Promise<ClickHouse> {
  const { url, database, cluster } = config.clickhouse;
  // On a cluster an insert into a Distributed table returns once the shards stored it, so a 2xx
  // (and a committed Kafka offset) still means durable, and the deduplication token goes with it.
  const settings = cluster === null ? SETTINGS : { ...SETTINGS, distributed_foreground_insert: 1 };
  if (url !== null) return { client: httpClient(config.clickhouse, settings), database, embedded: false, cluster };
  return {
    ...(await embeddedClient(config, { ...SETTINGS, ...EMBEDDED_WRITER_RESETS })),
    database,
    embedded: true,
    cluster: null,
  };
}

/**
 * chdb's connection applies a statement's settings as `SET` on its session, where they stay for the
 * statements after it; over HTTP they last one request. The writer's per-insert settings are therefore
 * given back their defaults on every statement that does not set them: a deduplication token left
 * over from one round's insert would otherwise make the next insert without one a duplicate, dropped.
 */
const EMBEDDED_WRITER_RESETS = { insert_deduplication_token: '' } as const;

/**
 * A handle for the reads of this process (cost queries, session and number history, the stored-id
 * lookup), whose every statement stops past max_execution_time and max_result_bytes (an error, not a
 * partial answer: result_overflow_mode 'throw'); the writer's inserts carry no such limit. Over HTTP a
 * client of its own with these settings. In the embedded engine one connection runs one statement at a
 * time, so reads get `connections` of their own to the same folder (chdb lets same-folder connections
 * run in parallel and see each other's writes at once); otherwise a dashboard query waits behind the
 * consumer's inserts, and one dashboard's queries behind another's.
 */
export async function createReadClickHouse(
  config: Pick<Config, 'dataDir' | 'clickhouse'>,
  writes: ClickHouse,
  connections = 1,
): Promise<ClickHouse> {
  const { maxExecutionTimeS, maxResultBytes } = config.clickhouse.readLimits;
  const settings = {
    ...SETTINGS,
    ...(writes.cluster === null ? {} : { distributed_foreground_insert: 1 }),
    max_execution_time: maxExecutionTimeS,
    max_result_bytes: String(maxResultBytes),
    result_overflow_mode: 'throw',
  } as const;
  if (!writes.embedded) return { ...writes, client: httpClient(config.clickhouse, settings) };
  return { ...writes, ...(await embeddedClient(config, settings, connections)) };
}

function httpClient({ url, username, password }: Config['clickhouse'], settings: ClickHouseSettings): ClickHouseClient {
  return createClient({
    ...(url === null ? {} : { url }),
    ...(username === null ? {} : { username }),
    ...(password === null ? {} : { password }),
    clickhouse_settings: settings,
    request_timeout: 30_000,
  });
}

async function embeddedClient(
  { dataDir, clickhouse }: Pick<Config, 'clickhouse' | 'dataDir'>,
  settings: ClickHouseSettings,
  connections = 1,
): Promise<{ client: ClickHouseClient; queue: ReadQueue }> {
  // Loaded only in the embedded mode: server deployments can leave the engine's binary out.
  const [{ Session }, { createChdbConnection }] = await Promise.all([import('chdb'), import('chdb/connection')]);
  const folder = path.join(dataDir, 'clickhouse');
  mkdirSync(folder, { recursive: true });
  // The engine starts with the process's first connection to its folder and takes that connection's
  // arguments, the server settings (later ones are ignored); chdb's Connection takes none, so a session
  // with them opens first, and closes once the connections hold the engine, which outlives it.
  const starter = new Session(folder, { connectionArgs: embeddedEngineArguments(clickhouse.embeddedMemory) });
  let opened: ClientConnection[];
  try {
    // chdb implements the Connection contract of @clickhouse/client-common, which the client bundles
    // a structurally identical copy of; the two declarations differ only by package.
    opened = Array.from(
      { length: connections },
      () => createChdbConnection({ path: folder }) as unknown as ClientConnection,
    );
  } finally {
    starter.close();
  }
  const connection = chdbConnectionPool(opened);
  return { client: createClient({ connection, clickhouse_settings: settings }), queue: connection.queue };
}
