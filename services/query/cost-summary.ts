import { Decimal } from 'decimal.js';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { tableName } from '../shared/clickhouse/tables.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import { localDate, startOfLocalDay, startOfMonth } from './zoned-time.ts';

interface ServiceRow {
  provider: string;
  service: string;
  event_type: string;
  unit: string;
  currency: string;
  cost_sum: string;
  month_cost: string;
  quantity_sum: string;
  reported: string;
  events_sum: string;
  unpriced: string;
}

const ZERO = new Decimal(0);
const money = (value: Decimal) => value.toFixed();

/** GET /api/costs/summary: compat.md's three keys first, then the breakdowns and counts. */
export async function costSummary(ch: ClickHouse, liveUsage: LiveUsageStore, userId: string, timeZone: string, nowMs: number) {
  const monthStart = startOfLocalDay(startOfMonth(localDate(nowMs, timeZone)), timeZone);
  const [rows, sessions, liveCost] = await Promise.all([serviceRows(ch, userId, monthStart), sessionCount(ch, userId), activeSessionsCost(ch, liveUsage, userId)]);
  const byProvider = new Map<string, Decimal>();
  const byService = new Map<string, { event_type: string; service: string; unit: string; quantity: Decimal; cost: Decimal }>();
  let total = ZERO, month = ZERO, reported = ZERO, events = 0, unpriced = 0;
  for (const row of rows) {
    const cost = new Decimal(row.cost_sum);
    total = total.plus(cost);
    month = month.plus(row.month_cost);
    reported = reported.plus(row.reported);
    events += Number(row.events_sum);
    unpriced += Number(row.unpriced);
    byProvider.set(row.provider, (byProvider.get(row.provider) ?? ZERO).plus(cost));
    const key = `${row.event_type}\u0000${row.service}\u0000${row.unit}`;
    const entry = byService.get(key) ?? { event_type: row.event_type, service: row.service, unit: row.unit, quantity: ZERO, cost: ZERO };
    byService.set(key, { ...entry, quantity: entry.quantity.plus(row.quantity_sum), cost: entry.cost.plus(cost) });
  }
  return {
    total_cost: money(total),
    this_month_cost: money(month),
    by_provider: Object.fromEntries([...byProvider].sort(([a], [b]) => a.localeCompare(b)).map(([provider, cost]) => [provider, money(cost)])),
    currency: rows[0]?.currency ?? 'USD',
    by_service: [...byService.values()].map((s) => ({ event_type: s.event_type, service: s.service, unit: s.unit, quantity: money(s.quantity), cost: money(s.cost) })),
    event_count: events,
    session_count: sessions,
    unpriced_event_count: unpriced,
    reported_total_cost: money(reported),
    live_cost: money(liveCost),
    as_of: new Date(nowMs).toISOString(),
  };
}

async function serviceRows(ch: ClickHouse, userId: string, monthStartMs: number): Promise<ServiceRow[]> {
  const result = await ch.client.query({
    // Aliases differ from the column names: ClickHouse would resolve a column to a same-named alias.
    query: `SELECT provider, service, event_type, unit, currency,
        sum(cost) AS cost_sum, sumIf(cost, bucket >= toDateTime(intDiv({month_start:Int64}, 1000), 'UTC')) AS month_cost,
        sum(quantity) AS quantity_sum, sum(reported_cost) AS reported, sum(events) AS events_sum, sum(unpriced_events) AS unpriced
      FROM ${tableName(ch, 'usageRollup15m')} WHERE user_id = {user:String}
      GROUP BY provider, service, event_type, unit, currency ORDER BY provider, service`,
    query_params: { user: userId, month_start: monthStartMs },
    format: 'JSONEachRow',
  });
  return result.json<ServiceRow>();
}

async function sessionCount(ch: ClickHouse, userId: string): Promise<number> {
  const result = await ch.client.query({
    query: `SELECT uniqExact(session_id) AS sessions FROM ${tableName(ch, 'usageEvents')} WHERE user_id = {user:String}`,
    query_params: { user: userId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ sessions: string }>();
  return Number(row?.sessions ?? 0);
}

/** What the user's calls still in progress have cost so far, from the live usage entries. */
async function activeSessionsCost(ch: ClickHouse, liveUsage: LiveUsageStore, userId: string): Promise<Decimal> {
  const result = await ch.client.query({
    query: `SELECT toString(id) AS id FROM ${tableName(ch, 'sessionsCurrent')} WHERE user_id = {user:String} AND status = 'ACTIVE' LIMIT 10000`,
    query_params: { user: userId },
    format: 'JSONEachRow',
  });
  const ids = (await result.json<{ id: string }>()).map((row) => row.id);
  const entries = (await Promise.all(ids.map((id) => liveUsage.read(id)))).flat();
  return entries.reduce((sum, entry) => sum.plus(entry.cost), ZERO);
}
