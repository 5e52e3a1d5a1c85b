import type { ClickHouse } from './client.ts';

/**
 * How many statements ClickHouse is running whose insert_deduplication_token starts with one of these
 * prefixes (a round's token and a colon: every insert of that round, insert-rows.ts), read from
 * system.processes, whose `Settings` holds each running statement's changed settings; on a cluster,
 * every replica's (clusterAllReplicas). An insert a server has begun stays there until it is stored or
 * has failed, whether its client is still waiting for it or not.
 */
export async function runningInserts(ch: ClickHouse, prefixes: readonly string[]): Promise<number> {
  if (prefixes.length === 0) return 0;
  // The cluster's name as the DDL names it (cluster-ddl.ts): configuration, not a client's input.
  const processes = ch.cluster === null ? 'system.processes' : `clusterAllReplicas('${ch.cluster}', system.processes)`;
  const result = await ch.client.query({
    query: `SELECT count() AS running FROM ${processes}
      WHERE arrayExists(prefix -> startsWith(Settings['insert_deduplication_token'], prefix), {prefixes:Array(String)})`,
    query_params: { prefixes },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ running: string | number }>();
  return Number(row?.running ?? 0);
}
