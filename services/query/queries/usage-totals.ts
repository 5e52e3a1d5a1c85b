import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { CostLine } from '../cost-tally.ts';
import type { InstantRange } from '../routes/date-bounds.ts';
import type { Period } from '../timeline-buckets.ts';
import { isUtcZone } from '../../shared/zoned-time.ts';
import { readRows, type Read } from './together.ts';
import { alignRange, DAY_MS, QUARTER_HOUR_MS, splitRange } from './range-split.ts';

// Aliases differ from the column names: ClickHouse would resolve a column to a same-named alias.
// Sums are Decimal(76, 18), as the rollups store them (migration 010): the events' Decimal(38, 18)
// is widened before it is summed, so that no sum of events at their bounds wraps (docs/usage-events.md, Limits).

export interface SummaryLine extends CostLine {
  readonly provider: string;
  readonly currency: string;
  readonly month_cost: string;
  readonly reported: string;
  readonly unpriced: string;
}

const ZERO = 'toDecimal256(0, 18)';
const WIDE_COST = 'toDecimal256(cost, 18)';
const WIDE_QUANTITY = 'toDecimal256(quantity, 18)';

/**
 * The read of a user's costs over all time per provider and service, and the part since `monthStartMs`: whole UTC
 * days from usage_totals_daily, and the month's first partial UTC day from the quarter hours (and, were the month
 * start not on one, the events) — so a year of usage is a few hundred rows.
 */
export function summaryLinesRead(ch: ClickHouse, userId: string, monthStartMs: number): Read {
  const monthDay = Math.ceil(monthStartMs / DAY_MS) * DAY_MS;
  const edge =
    monthStartMs < monthDay ? splitRange({ start: monthStartMs, end: monthDay }, QUARTER_HOUR_MS, 'bucket') : null;
  const keys = 'provider, service, event_type, unit, currency';
  const monthOnly = `${ZERO} AS c, ${WIDE_COST} AS mc, ${ZERO} AS q, ${ZERO} AS r, toInt64(0) AS n, toInt64(0) AS u`;
  const sources = [
    `SELECT ${keys}, cost AS c, if(day >= fromUnixTimestamp64Milli(toInt64({month_day:Int64}), 'UTC'), cost, ${ZERO}) AS mc, quantity AS q, reported_cost AS r, events AS n, unpriced_events AS u
       FROM ${tableName(ch, 'usageTotalsDaily')} WHERE user_id = {user:String}`,
    edge?.rollup == null
      ? null
      : `SELECT ${keys}, ${monthOnly} FROM ${tableName(ch, 'usageTotals15m')} WHERE user_id = {user:String} AND ${edge.rollup}`,
    edge?.events == null
      ? null
      : `SELECT ${keys}, ${monthOnly} FROM ${tableName(ch, 'usageEvents')} WHERE user_id = {user:String} AND (${edge.events})`,
  ].filter((source) => source !== null);
  return {
    sql: `SELECT ${keys}, sum(c) AS cost_sum, sum(mc) AS month_cost, sum(q) AS quantity_sum, sum(r) AS reported, sum(n) AS events_sum, sum(u) AS unpriced
      FROM (${sources.join(' UNION ALL ')}) GROUP BY ${keys}`,
    params: { user: userId, month_day: monthDay, ...edge?.params },
  };
}

/** The first and last quarter hours holding a user's usage (the instants they start at). */
export interface UsageSpan {
  readonly first: number;
  readonly last: number;
}

/** The read of the span of a user's usage: one row, whose `lines` is 0 without usage (usageSpanOf reads it). */
export function usageSpanRead(ch: ClickHouse, userId: string): Read {
  return {
    sql: `SELECT toUnixTimestamp(min(bucket)) AS first_at, toUnixTimestamp(max(bucket)) AS last_at, count() AS lines FROM ${tableName(ch, 'usageTotals15m')} WHERE user_id = {user:String}`,
    params: { user: userId },
  };
}

/** A row of usageSpanRead. */
export interface UsageSpanRow {
  readonly first_at: number | string;
  readonly last_at: number | string;
  readonly lines: number | string;
}

/** The span usageSpanRead's rows give, or null without usage. */
export function usageSpanOf([row]: readonly UsageSpanRow[]): UsageSpan | null {
  return row === undefined || Number(row.lines) === 0
    ? null
    : { first: Number(row.first_at) * 1000, last: Number(row.last_at) * 1000 };
}

/** The span of a user's usage, or null without usage. */
export async function usageSpan(ch: ClickHouse, userId: string): Promise<UsageSpan | null> {
  return usageSpanOf(await readRows<UsageSpanRow>(ch, usageSpanRead(ch, userId)));
}

export interface TimelineLine extends CostLine {
  readonly bucket_date: string;
  readonly provider: string;
}

/** Local-calendar bucket of a time column, per period: identifiers from a closed map. */
const BUCKET_OF: Record<Period, string> = { daily: 'toDate', weekly: 'toMonday', monthly: 'toStartOfMonth' };

/**
 * The read of the costs per local bucket, provider and service over [start, end): whole quarter hours from the
 * rollup, the unaligned edges from the events, bucketed by ClickHouse in the zone. In UTC a local day is a UTC day,
 * so the whole days come from usage_totals_daily and only the partial first and last days from the quarter hours: a
 * year is a few hundred rows instead of 35,000.
 */
export function timelineLinesRead(
  ch: ClickHouse,
  userId: string,
  range: InstantRange,
  period: Period,
  timeZone: string,
): Read {
  const columns = 'provider, service, event_type, unit, currency';
  const quarterHours = (part: InstantRange, prefix: string) => {
    const split = splitRange(part, QUARTER_HOUR_MS, 'bucket', 'occurred_at', prefix);
    const sources = [
      split.rollup === null
        ? null
        : `SELECT toDateTime64(bucket, 3, 'UTC') AS t, ${columns}, cost AS c, quantity AS q, events AS n FROM ${tableName(ch, 'usageTotals15m')} WHERE user_id = {user:String} AND ${split.rollup}`,
      split.events === null
        ? null
        : `SELECT occurred_at AS t, ${columns}, ${WIDE_COST} AS c, ${WIDE_QUANTITY} AS q, toInt64(weight) AS n FROM ${tableName(ch, 'usageEvents')} WHERE user_id = {user:String} AND (${split.events})`,
    ];
    return { sources, params: split.params };
  };
  const parts = isUtcZone(timeZone) ? alignRange(range, DAY_MS) : { inner: null, edges: [range] };
  const edges = parts.edges.map((edge, i) => quarterHours(edge, `e${i}_`));
  const days = parts.inner === null ? null : splitRange(parts.inner, DAY_MS, 'day', 'occurred_at', 'd_');
  const sources = [
    days?.rollup == null
      ? null
      : `SELECT toDateTime64(day, 3, 'UTC') AS t, ${columns}, cost AS c, quantity AS q, events AS n FROM ${tableName(ch, 'usageTotalsDaily')} WHERE user_id = {user:String} AND ${days.rollup}`,
    ...edges.flatMap((edge) => edge.sources),
  ].filter((source) => source !== null);
  return {
    sql: `SELECT toString(${BUCKET_OF[period]}(t, {tz:String})) AS bucket_date, ${columns},
        sum(c) AS cost_sum, sum(q) AS quantity_sum, sum(n) AS events_sum
      FROM (${sources.join(' UNION ALL ')})
      GROUP BY bucket_date, ${columns}`,
    params: {
      user: userId,
      tz: timeZone,
      ...days?.params,
      ...Object.assign({}, ...edges.map((edge) => edge.params)),
    },
  };
}
