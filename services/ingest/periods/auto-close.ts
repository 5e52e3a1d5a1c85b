import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { readPeriodVersions } from '../../shared/clickhouse/tables/billing-periods.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import { AppError } from '../../shared/errors.ts';
import type { Caller } from '../../shared/auth/access.ts';
import type { Logger } from '../../shared/logger.ts';
import { monthBounds, periodOf } from '../../shared/validation/billing-period.ts';
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
 * PERIOD_AUTO_CLOSE_DAYS: the months of the last year that ended at least `days` ago are closed for
 * every tenant with usage in them that never closed them, one pass now and one every hour. Each
 * close is the admin route's (a record and an audit entry, actor `period-auto-close`); a month that
 * another ingest process closed meanwhile is its 409, passed over.
 */
export async function autoClosePass({ days, reads, periods, log, now = Date.now }: AutoCloseDeps): Promise<number> {
  const nowMs = now();
  const due: string[] = [];
  for (let back = 1; back <= 12; back++) {
    const current = new Date(nowMs);
    const period = periodOf(Date.UTC(current.getUTCFullYear(), current.getUTCMonth() - back, 1));
    if (monthBounds(period).end + days * DAY_MS <= nowMs) due.push(period);
  }
  if (due.length === 0) return 0;
  const first = monthBounds(due.at(-1)!).start;
  const result = await reads.client.query({
    query: `SELECT DISTINCT user_id, formatDateTime(day, '%Y-%m', 'UTC') AS period FROM ${tableName(reads, 'usageTotalsDaily')}
      WHERE day >= fromUnixTimestamp64Milli(toInt64({first:Int64}), 'UTC') AND period IN {due:Array(String)}`,
    query_params: { first, due },
    format: 'JSONEachRow',
  });
  // A month closed once is left to the admins: a reopened one stays open until one of them closes it.
  const closed = new Set(
    (await readPeriodVersions(reads, null)).map((entry) => `${entry.user_id}\u0000${entry.period}`),
  );
  let count = 0;
  for (const { user_id, period } of await result.json<{ user_id: string; period: string }>()) {
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
