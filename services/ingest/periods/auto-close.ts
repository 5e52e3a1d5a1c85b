import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { readPeriodVersions } from '../../shared/clickhouse/tables/billing-periods.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import { AppError } from '../../shared/errors.ts';
import type { Caller } from '../../shared/auth/access.ts';
import type { Logger } from '../../shared/logger.ts';
import { DEFAULT_BILLING_TIME_ZONE, readTenantSettings } from '../../shared/clickhouse/tables/tenant-settings.ts';
import { monthBounds, periodOf, shiftPeriod } from '../../shared/validation/billing-period.ts';
import type { PeriodService } from './period-service.ts';

const DAY_MS = 86_400_000;
/** How often ingest looks for months due to close: a month closes within this much of its day. */
export const AUTO_CLOSE_INTERVAL_MS = 3_600_000;
/** The audit log's actor of a close no one asked for. */
export const AUTO_CLOSE_ACTOR: Caller = Object.freeze({
  kind: 'bootstrap',
  id: 'period-auto-close',
  scope: 'admin',
  tenant: null,
});

export interface AutoCloseDeps {
  readonly days: number;
  readonly reads: ClickHouse;
  readonly periods: Pick<PeriodService, 'close'>;
  readonly log: Logger;
  readonly now?: () => number;
}

/**
 * PERIOD_AUTO_CLOSE_DAYS: the months of the last year that ended at least `days` ago (in each
 * tenant's time zone) are closed for every tenant with usage in them that never closed them, one pass
 * now and one every hour. Each
 * close is the admin route's (a record and an audit entry, actor `period-auto-close`); a month that
 * another ingest process closed meanwhile is its 409, passed over.
 */
export async function autoClosePass({ days, reads, periods, log, now = Date.now }: AutoCloseDeps): Promise<number> {
  const nowMs = now();
  const settings = await readTenantSettings(reads, null);
  const zoned = settings.filter((entry) => entry.time_zone !== DEFAULT_BILLING_TIME_ZONE);
  const candidates = await monthsWithUsage(reads, nowMs, days, DEFAULT_BILLING_TIME_ZONE, {
    except: zoned.map((entry) => entry.user_id),
  });
  for (const timeZone of new Set(zoned.map((entry) => entry.time_zone))) {
    const only = zoned.filter((entry) => entry.time_zone === timeZone).map((entry) => entry.user_id);
    candidates.push(...(await monthsWithUsage(reads, nowMs, days, timeZone, { only })));
  }
  // A month closed once is left to the admins: a reopened one stays open until one of them closes it.
  const closed = new Set(
    (await readPeriodVersions(reads, null)).map((entry) => `${entry.user_id}\u0000${entry.period}`),
  );
  let count = 0;
  for (const { user_id, period } of candidates) {
    if (closed.has(`${user_id}\u0000${period}`)) continue;
    try {
      await periods.close(user_id, period, AUTO_CLOSE_ACTOR, null);
      count++;
      log.info({ user_id, period }, 'period_auto_closed');
    } catch (error) {
      if (!(error instanceof AppError && error.code === 'CONFLICT')) throw error;
    }
  }
  return count;
}

/** Runs autoClosePass now and every AUTO_CLOSE_INTERVAL_MS; a failed pass is logged and tried again on the next. */
export function scheduleAutoClose(deps: AutoCloseDeps): () => void {
  const pass = () =>
    autoClosePass(deps).catch((error: unknown) => deps.log.warn({ err: error }, 'period_auto_close_failed'));
  const first = setTimeout(pass, 5_000);
  const timer = setInterval(pass, AUTO_CLOSE_INTERVAL_MS);
  first.unref();
  timer.unref();
  return () => {
    clearTimeout(first);
    clearInterval(timer);
  };
}

/**
 * The tenants' months in a time zone that ended at least `days` before `nowMs` (of the last year) and
 * have usage: of every tenant `except` some (UTC, read from the UTC days), or of `only` some (read
 * from the quarter hours, which every zone's months are unions of).
 */
async function monthsWithUsage(
  reads: ClickHouse,
  nowMs: number,
  days: number,
  timeZone: string,
  users: { readonly except: readonly string[] } | { readonly only: readonly string[] },
): Promise<{ user_id: string; period: string }[]> {
  const due: { period: string; start: number; end: number }[] = [];
  const current = periodOf(nowMs, timeZone);
  for (let back = 1; back <= 12; back++) {
    const period = shiftPeriod(current, -back);
    const bounds = monthBounds(period, timeZone);
    if (bounds.end + days * DAY_MS <= nowMs) due.push({ period, ...bounds });
  }
  if (due.length === 0) return [];
  const [table, column] =
    'only' in users ? (['usageTotals15m', 'bucket'] as const) : (['usageTotalsDaily', 'day'] as const);
  const instant = `toUnixTimestamp(${column}) * 1000`;
  const result = await reads.client.query({
    query: `SELECT DISTINCT user_id,
        arrayElement({periods:Array(String)}, arrayFirstIndex((s, e) -> ${instant} >= s AND ${instant} < e,
          {starts:Array(Int64)}, {ends:Array(Int64)})) AS period
      FROM ${tableName(reads, table)}
      WHERE ${column} >= fromUnixTimestamp64Milli(toInt64({first:Int64}), 'UTC')
        AND ${column} < fromUnixTimestamp64Milli(toInt64({last:Int64}), 'UTC')
        AND user_id ${'only' in users ? 'IN' : 'NOT IN'} {users:Array(String)}`,
    query_params: {
      periods: due.map((month) => month.period),
      starts: due.map((month) => month.start),
      ends: due.map((month) => month.end),
      first: due.at(-1)!.start,
      last: due[0]!.end,
      users: 'only' in users ? users.only : users.except,
    },
    format: 'JSONEachRow',
  });
  return result.json<{ user_id: string; period: string }>();
}
