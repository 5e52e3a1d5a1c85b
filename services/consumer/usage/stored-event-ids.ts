import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';

/**
 * Which of these event ids are stored already, from usage_event_ids (ordered by id: a primary-key
 * search, whatever the number of events). The alias differs from the column: ClickHouse resolves
 * WHERE to a SELECT alias first, and `toString(id) AS id` would make the filter a string compare that
 * no index serves.
 */
export function storedEventIdsQuery(ch: ClickHouse): string {
  return `SELECT DISTINCT toString(id) AS stored_id FROM ${tableName(ch, 'usageEventIds')} WHERE id IN (SELECT arrayJoin({ids:Array(UUID)}))`;
}

export async function storedEventIds(ch: ClickHouse, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const result = await ch.client.query({ query: storedEventIdsQuery(ch), query_params: { ids }, format: 'JSONEachRow' });
  return new Set((await result.json<{ stored_id: string }>()).map((row) => row.stored_id));
}
