import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { createClient, type ClickHouseClient, type ClickHouseClientConfigOptions } from '@clickhouse/client';
import type { Config } from '../config.ts';

export type { ClickHouseClient };

export interface ClickHouse {
  readonly client: ClickHouseClient;
  /** The database every statement names explicitly (the embedded engine ignores a client default). */
  readonly database: string;
  readonly embedded: boolean;
}

/**
 * With CLICKHOUSE_URL: HTTP to a server. Without it: the embedded engine through chdb's
 * connection for the same client, so the same SQL runs on both. The embedded engine allows one
 * data folder per process, and only one process may use a folder at a time.
 */
export async function createClickHouse(config: Pick<Config, 'clickhouse' | 'dataDir'>): Promise<ClickHouse> {
  const { url, database, username, password } = config.clickhouse;
  // Money is read as quoted decimals so that it never passes through a JS number.
  const clickhouse_settings = { output_format_json_quote_decimals: 1, output_format_json_quote_64bit_integers: 1 } as const;
  if (url !== null) {
    const client = createClient({
      url,
      ...(username === null ? {} : { username }),
      ...(password === null ? {} : { password }),
      clickhouse_settings,
      request_timeout: 30_000,
    });
    return { client, database, embedded: false };
  }
  // Loaded only in the embedded mode: server deployments can leave the engine's binary out.
  const { createChdbConnection } = await import('chdb/connection');
  const folder = path.join(config.dataDir, 'clickhouse');
  mkdirSync(folder, { recursive: true });
  // chdb implements the Connection contract of @clickhouse/client-common, which the client bundles
  // a structurally identical copy of; the two declarations differ only by package.
  const connection = createChdbConnection({ path: folder }) as unknown as ClickHouseClientConfigOptions['connection'];
  const client = createClient({ connection, clickhouse_settings });
  return { client, database, embedded: true };
}
