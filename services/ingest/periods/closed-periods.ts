import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import {
  latestVersions,
  readPeriodVersions,
  type ClosedPeriod,
  type PeriodVersion,
} from '../../shared/clickhouse/tables/billing-periods.ts';
import type { Logger } from '../../shared/logger.ts';
import { periodOf } from '../../shared/validation/billing-period.ts';

/** How often each ingest process reads the closed months again: another process's close reaches it this late at most. */
export const CLOSED_PERIODS_REFRESH_MS = 2_000;

/**
 * The tenants' closed months as this ingest process knows them: read from billing_periods every
 * CLOSED_PERIODS_REFRESH_MS, and at once for a close or reopen made here. Usage of a closed month is
 * refused with a 409 (usage-service.ts); what another process accepted in the moment before it learned
 * of a close is stored after the close, and so is an adjustment of a later statement, never a change
 * of the closed one (docs/statements.md).
 */
export class ClosedPeriods {
  private latest = new Map<string, PeriodVersion>();
  /** Changes made here, which a read may not show yet. */
  private readonly noted = new Map<string, PeriodVersion>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly reads: ClickHouse,
    private readonly log: Logger,
  ) {}

  start(): () => void {
    const tick = () =>
      this.refresh().catch((error: unknown) => this.log.warn({ err: error }, 'closed_periods_refresh_failed'));
    void tick();
    this.timer = setInterval(tick, CLOSED_PERIODS_REFRESH_MS);
    this.timer.unref();
    return () => {
      if (this.timer !== null) clearInterval(this.timer);
    };
  }

  async refresh(): Promise<void> {
    this.latest = this.withNoted(latestVersions(await readPeriodVersions(this.reads, null)));
  }

  /** The closed month an instant of this tenant lies in, or null. */
  closedAt(userId: string, instantMs: number): ClosedPeriod | null {
    return closedOnly(this.latest.get(key(userId, periodOf(instantMs))));
  }

  /** The tenant's closed months as stored now, with the changes made here (for decisions that must be exact). */
  async fresh(userId: string): Promise<ClosedPeriod[]> {
    const own = this.withNoted(latestVersions(await readPeriodVersions(this.reads, userId)));
    return [...own.values()].flatMap((version) =>
      version.user_id === userId && closedOnly(version) !== null ? [version as ClosedPeriod] : [],
    );
  }

  /** The latest version of a tenant's month as stored now, or as changed here if the store does not show it yet. */
  async latestOf(userId: string, period: string): Promise<PeriodVersion | null> {
    const own = latestVersions((await readPeriodVersions(this.reads, userId)).filter((v) => v.period === period));
    return this.withNoted(own).get(key(userId, period)) ?? null;
  }

  note(version: PeriodVersion): void {
    const name = key(version.user_id, version.period);
    this.noted.set(name, version);
    this.latest.set(name, version);
  }

  /** The latest versions read, each replaced by a change made here that the read does not show yet. */
  private withNoted(read: readonly PeriodVersion[]): Map<string, PeriodVersion> {
    const latest = new Map(read.map((version) => [key(version.user_id, version.period), version]));
    for (const [name, version] of this.noted) {
      const stored = latest.get(name);
      const newer =
        stored === undefined ||
        stored.version < version.version ||
        (stored.version === version.version && stored.reopened_ms === null && version.reopened_ms !== null);
      if (newer) latest.set(name, version);
      else this.noted.delete(name);
    }
    return latest;
  }
}

const key = (userId: string, period: string) => `${userId}\u0000${period}`;

function closedOnly(version: PeriodVersion | undefined): ClosedPeriod | null {
  return version === undefined || version.reopened_ms !== null ? null : (version as ClosedPeriod);
}
