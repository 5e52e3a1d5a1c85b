import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import { eventKey, type EventRef } from './event-key.ts';

/**
 * Which of these events are stored already, by tenant and id, from usage_event_ids_by_user (ordered
 * by (user_id, id): a primary-key search, whatever the number of events). The aliases differ from
 * the columns: ClickHouse resolves WHERE to a SELECT alias first, and `toString(id) AS id` would make
 * the filter a string compare that no index serves.
 */
export function storedEventIdsQuery(ch: ClickHouse): string {
  return `SELECT DISTINCT user_id AS stored_user, toString(id) AS stored_id FROM ${tableName(ch, 'usageEventIds')}
    WHERE (user_id, id) IN (SELECT arrayJoin(arrayZip({users:Array(String)}, {ids:Array(UUID)})))`;
}

/** The eventKey of every event of `refs` that is stored. */
export async function storedEventIds(ch: ClickHouse, refs: readonly EventRef[]): Promise<Set<string>> {
  if (refs.length === 0) return new Set();
  const result = await ch.client.query({
    query: storedEventIdsQuery(ch),
    query_params: { users: refs.map((ref) => ref.user_id), ids: refs.map((ref) => ref.event_id) },
    format: 'JSONEachRow',
  });
  return new Set((await result.json<{ stored_user: string; stored_id: string }>()).map((row) => eventKey(row.stored_user, row.stored_id)));
}
