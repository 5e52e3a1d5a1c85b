import type { ClickHouse } from '../../services/shared/clickhouse/client.ts';

/** Every table a usage_events insert feeds through a materialized view, with its event count and cost columns. */
const ROLLUPS = ['usage_rollup_15m', 'usage_totals_15m', 'usage_totals_daily', 'usage_by_agent_daily', 'usage_by_session'] as const;

/**
 * The event count and cost sum of usage_events, of every rollup and of usage_event_ids, so a test
 * can assert that a replay or a retry was counted once everywhere, not only in the table it reads.
 */
export async function storedTotals(ch: ClickHouse): Promise<Record<string, { n: string; cost?: string }>> {
  const one = async (sql: string) => (await (await ch.client.query({ query: sql, format: 'JSONEachRow' })).json<{ n: string; cost?: string }>())[0]!;
  const totals: Record<string, { n: string; cost?: string }> = {};
  totals.usage_events = await one(`SELECT toString(count()) AS n, toString(sum(cost)) AS cost FROM ${ch.database}.usage_events`);
  for (const table of ROLLUPS) totals[table] = await one(`SELECT toString(sum(events)) AS n, toString(sum(cost)) AS cost FROM ${ch.database}.${table}`);
  totals.usage_event_ids = await one(`SELECT toString(count()) AS n FROM ${ch.database}.usage_event_ids`);
  return totals;
}

/** What storedTotals reads when every table holds `events` events costing `cost` in all. */
export function expectedTotals(events: number, cost: string): Record<string, { n: string; cost?: string }> {
  const n = String(events);
  return { usage_events: { n, cost }, ...Object.fromEntries(ROLLUPS.map((table) => [table, { n, cost }])), usage_event_ids: { n } };
}
