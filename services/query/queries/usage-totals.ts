import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { CostLine } from '../cost-tally.ts';
import type { InstantRange } from '../routes/date-bounds.ts';
import type { Period } from '../timeline-buckets.ts';
import { QUARTER_HOUR_MS, splitRange } from './range-split.ts';

// Aliases differ from the column names: ClickHouse would resolve a column to a same-named alias.

export interface SummaryLine extends CostLine {
  readonly provider: string;
  readonly currency: string;
  readonly month_cost: string;
  readonly reported: string;
  readonly unpriced: string;
}

/** A user's costs over all time per provider and service, and the part since `monthStartMs`. */
export async function summaryLines(ch: ClickHouse, userId: string, monthStartMs: number): Promise<SummaryLine[]> {
  const result = await ch.client.query({
    query: `SELECT provider, service, event_type, unit, currency,
        sum(cost) AS cost_sum, sumIf(cost, bucket >= fromUnixTimestamp64Milli(toInt64({month_start:Int64}), 'UTC')) AS month_cost,
        sum(quantity) AS quantity_sum, sum(reported_cost) AS reported, sum(events) AS events_sum, sum(unpriced_events) AS unpriced
      FROM ${tableName(ch, 'usageTotals15m')} WHERE user_id = {user:String}
      GROUP BY provider, service, event_type, unit, currency ORDER BY provider, service`,
    query_params: { user: userId, month_start: monthStartMs },
    format: 'JSONEachRow',
  });
  return result.json<SummaryLine>();
}

/** The instant of a user's first usage (the start of its quarter hour), or null without usage. */
export async function firstUsageAt(ch: ClickHouse, userId: string): Promise<number | null> {
  const result = await ch.client.query({
    query: `SELECT toUnixTimestamp(min(bucket)) AS first_at, count() AS lines FROM ${tableName(ch, 'usageTotals15m')} WHERE user_id = {user:String}`,
    query_params: { user: userId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ first_at: number | string; lines: number | string }>();
  return row === undefined || Number(row.lines) === 0 ? null : Number(row.first_at) * 1000;
}

export interface TimelineLine extends CostLine {
  readonly bucket_date: string;
  readonly provider: string;
}

/** Local-calendar bucket of a time column, per period: identifiers from a closed map. */
const BUCKET_OF: Record<Period, string> = { daily: 'toDate', weekly: 'toMonday', monthly: 'toStartOfMonth' };

/**
 * Costs per local bucket, provider and service over [start, end): whole quarter hours from the
 * rollup, the unaligned edges from the events, bucketed by ClickHouse in the zone.
 */
export async function timelineLines(ch: ClickHouse, userId: string, range: InstantRange, period: Period, timeZone: string): Promise<TimelineLine[]> {
  const split = splitRange(range, QUARTER_HOUR_MS, 'bucket');
  const columns = 'provider, service, event_type, unit, currency';
  const sources = [
    split.rollup === null ? null : `SELECT toDateTime64(bucket, 3, 'UTC') AS t, ${columns}, cost AS c, quantity AS q, events AS n FROM ${tableName(ch, 'usageTotals15m')} WHERE user_id = {user:String} AND ${split.rollup}`,
    split.events === null ? null : `SELECT occurred_at AS t, ${columns}, cost AS c, quantity AS q, toUInt64(1) AS n FROM ${tableName(ch, 'usageEvents')} WHERE user_id = {user:String} AND (${split.events})`,
  ].filter((source) => source !== null);
  const result = await ch.client.query({
    query: `SELECT toString(${BUCKET_OF[period]}(t, {tz:String})) AS bucket_date, ${columns},
        sum(c) AS cost_sum, sum(q) AS quantity_sum, sum(n) AS events_sum
      FROM (${sources.join(' UNION ALL ')})
      GROUP BY bucket_date, ${columns}`,
    query_params: { user: userId, tz: timeZone, ...split.params },
    format: 'JSONEachRow',
  });
  return result.json<TimelineLine>();
}
