import type { UsageEventType } from '../../schemas/http/usage-event.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { tableName } from '../shared/clickhouse/tables.ts';
import { money } from './cost-tally.ts';

/** At most this many provider, model and event type groups are listed, the most events first. */
export const UNPRICED_GROUP_LIMIT = 1000;

/**
 * GET /api/costs/unpriced: the caller's usage stored at cost 0 because nothing priced it (no card
 * entry, no catalog price, no reported cost), grouped by provider, model and event type, from the
 * unpriced_usage rollup (migration 012): a few rows however many events the tenant has. A group whose
 * every event was voided or amended to a priced one (docs/corrections.md) counts 0 and is left out.
 */
export async function unpricedUsage(ch: ClickHouse, userId: string) {
  const result = await ch.client.query({
    query: `SELECT provider, model, event_type, unit, sum(events) AS event_count, sum(quantity) AS total_quantity,
        toString(toUnixTimestamp64Milli(min(first_seen))) AS first_ms, toString(toUnixTimestamp64Milli(max(last_seen))) AS last_ms
      FROM ${tableName(ch, 'unpricedUsage')} WHERE user_id = {user:String}
      GROUP BY provider, model, event_type, unit
      HAVING event_count > 0
      ORDER BY event_count DESC, provider, model, event_type
      LIMIT ${UNPRICED_GROUP_LIMIT}`,
    query_params: { user: userId },
    format: 'JSONEachRow',
  });
  const rows = await result.json<{
    provider: string;
    model: string;
    event_type: UsageEventType;
    unit: string;
    event_count: string;
    total_quantity: string;
    first_ms: string;
    last_ms: string;
  }>();
  return rows.map((row) => ({
    provider: row.provider,
    model: row.model === '' ? null : row.model,
    event_type: row.event_type,
    unit: row.unit,
    event_count: Number(row.event_count),
    quantity: money(row.total_quantity),
    first_seen: new Date(Number(row.first_ms)).toISOString(),
    last_seen: new Date(Number(row.last_ms)).toISOString(),
  }));
}
