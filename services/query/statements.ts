import type { WireOf } from '../../schemas/http/response-parts.ts';
import type { statementSchema } from '../../schemas/http/periods.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { latestVersions, readPeriodVersions } from '../shared/clickhouse/tables/billing-periods.ts';
import { tableName } from '../shared/clickhouse/tables.ts';
import { Exact } from '../shared/exact-decimal.ts';
import type { TextBody } from '../shared/http/text-body.ts';
import { csvBody } from './csv.ts';
import { monthBounds } from '../shared/validation/billing-period.ts';
import { readBillingTimeZone } from '../shared/clickhouse/tables/tenant-settings.ts';

export type Statement = WireOf<typeof statementSchema>;
type StatementLine = Statement['lines'][number];

interface LineRow {
  readonly kind: 'usage' | 'adjustment';
  readonly line_period: string;
  readonly service: string;
  readonly provider: string;
  readonly model: string | null;
  readonly unit: string;
  readonly unit_price: string;
  readonly quantity_sum: string;
  readonly cost_sum: string;
  readonly agent: string;
}

/**
 * A tenant's statement of one month (docs/statements.md), from usage_events: the usage lines are the
 * month's rows stored while it was open (before its first close, and between a reopen and the next
 * close); the adjustment lines are rows stored during the month that belong to an earlier month and
 * were stored while a close of it held (late corrections, and usage that slipped past a close). Every
 * row is on exactly one month's statement, so the statements of all months add up to the summary, and
 * what a close froze never changes. Months begin and end in the tenant's time zone (UTC unless set). Lines are per service, provider, model, unit and unit price (per
 * agent too with `byAgent`); lines that net to nothing (an event and its void) are left out.
 */
export async function statementOf(
  ch: ClickHouse,
  userId: string,
  period: string,
  byAgent: boolean,
): Promise<Statement> {
  const [versions, timeZone] = await Promise.all([readPeriodVersions(ch, userId), readBillingTimeZone(ch, userId)]);
  const [latest] = latestVersions(versions.filter((version) => version.period === period));
  const { start, end } = monthBounds(period, timeZone);
  const closes = versions.map((version) => ({ ...version, ...monthBounds(version.period, timeZone) }));
  const agent = byAgent ? 'agent_id' : "''";
  const columns = `service, provider, nullIf(model, '') AS model, unit, toString(unit_cost) AS unit_price, ${agent} AS agent`;
  const sums =
    'toString(sum(toDecimal256(quantity, 18))) AS quantity_sum, toString(sum(toDecimal256(cost, 18))) AS cost_sum';
  const groups = `line_period, service, provider, model, unit, unit_cost, agent`;
  // The close a row was stored under: its month's (in the tenant's zone), from its closed_at until its
  // reopen (or for ever). The month's instants are given, so no zone is named in the query.
  const underClose = `(s, e, a, b) -> toUnixTimestamp64Milli(occurred_at) >= s AND toUnixTimestamp64Milli(occurred_at) < e
      AND toUnixTimestamp64Milli(stored_at) >= a AND toUnixTimestamp64Milli(stored_at) < b`;
  const closeArrays =
    '{closed_start:Array(Int64)}, {closed_end:Array(Int64)}, {closed_from:Array(Int64)}, {closed_until:Array(Int64)}';
  const result = await ch.client.query({
    query: `SELECT 'usage' AS kind, {period:String} AS line_period, ${columns}, ${sums}
        FROM ${tableName(ch, 'usageEvents')}
        WHERE user_id = {user:String}
          AND occurred_at >= fromUnixTimestamp64Milli(toInt64({start:Int64}), 'UTC')
          AND occurred_at < fromUnixTimestamp64Milli(toInt64({end:Int64}), 'UTC')
          AND NOT arrayExists(${underClose}, ${closeArrays})
        GROUP BY ${groups}
      UNION ALL
      SELECT 'adjustment' AS kind, arrayElement({closed_periods:Array(String)}, arrayFirstIndex(${underClose}, ${closeArrays})) AS line_period,
          ${columns}, ${sums}
        FROM ${tableName(ch, 'usageEvents')}
        WHERE user_id = {user:String}
          AND stored_at >= fromUnixTimestamp64Milli(toInt64({start:Int64}), 'UTC')
          AND stored_at < fromUnixTimestamp64Milli(toInt64({end:Int64}), 'UTC')
          AND occurred_at < fromUnixTimestamp64Milli(toInt64({start:Int64}), 'UTC')
          AND arrayExists(${underClose}, ${closeArrays})
        GROUP BY ${groups}`,
    query_params: {
      user: userId,
      period,
      start,
      end,
      closed_periods: closes.map((close) => close.period),
      closed_start: closes.map((close) => close.start),
      closed_end: closes.map((close) => close.end),
      closed_from: closes.map((close) => close.closed_ms),
      closed_until: closes.map((close) => close.reopened_ms ?? Number.MAX_SAFE_INTEGER),
    },
    format: 'JSONEachRow',
  });
  const rows = (await result.json<LineRow>()).filter(
    (row) => !new Exact(row.quantity_sum).isZero() || !new Exact(row.cost_sum).isZero(),
  );
  rows.sort((a, b) => lineOrder(a).localeCompare(lineOrder(b)));
  const lines: StatementLine[] = rows.map((row) => ({
    kind: row.kind,
    period: row.line_period,
    service: row.service,
    provider: row.provider,
    model: row.model,
    unit: row.unit,
    quantity: new Exact(row.quantity_sum).toFixed(),
    unit_price: new Exact(row.unit_price).toFixed(),
    cost: new Exact(row.cost_sum).toFixed(),
    ...(byAgent ? { agent_id: row.agent === '' ? null : row.agent } : {}),
  }));
  const closed = latest !== undefined && latest.reopened_ms === null;
  return {
    user_id: userId,
    period,
    status: closed ? 'closed' : 'open',
    version: latest?.version ?? 0,
    closed_at: closed ? new Date(latest.closed_ms).toISOString() : null,
    time_zone: timeZone,
    period_start: new Date(start).toISOString(),
    period_end: new Date(end).toISOString(),
    currency: 'USD',
    total_cost: Exact.sum(0, ...lines.map((line) => line.cost)).toFixed(),
    lines,
  };
}

const lineOrder = (row: LineRow) =>
  [
    row.kind === 'usage' ? 0 : 1,
    row.line_period,
    row.service,
    row.provider,
    row.model ?? '',
    row.unit,
    row.agent,
    row.unit_price,
  ].join('\u0000');

/** The statement's lines as CSV, one row each, the total in the file name's statement. */
export function statementCsv(statement: Statement): TextBody {
  const header = [
    'kind',
    'period',
    'service',
    'provider',
    'model',
    'unit',
    'quantity',
    'unit_price',
    'cost',
    'agent_id',
  ];
  return csvBody(
    `statement-${statement.user_id}-${statement.period}`,
    header,
    statement.lines.map((line) => [
      line.kind,
      line.period,
      line.service,
      line.provider,
      line.model ?? '',
      line.unit,
      line.quantity,
      line.unit_price,
      line.cost,
      line.agent_id ?? '',
    ]),
  );
}
