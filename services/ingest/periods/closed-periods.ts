import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import {
  latestVersions,
  readPeriodVersions,
  type ClosedPeriod,
  type PeriodVersion,
} from '../../shared/clickhouse/tables/billing-periods.ts';
import {
  DEFAULT_BILLING_TIME_ZONE,
  readTenantSettings,
  type TenantSettings,
} from '../../shared/clickhouse/tables/tenant-settings.ts';
import type { Logger } from '../../shared/logger.ts';
import { refreshEvery } from '../../shared/refresh-every.ts';
import { periodOf } from '../../shared/validation/billing-period.ts';

/** How often each ingest process reads the closed months again: another process's close reaches it this late at most. */
export const CLOSED_PERIODS_REFRESH_MS = 2_000;

/**
 * The tenants' closed months, and the time zones their months are in, as this ingest process knows
 * them: read from billing_periods and tenant_settings every CLOSED_PERIODS_REFRESH_MS, and at once for
 * a change made here. Usage of a closed month is
 * refused with a 409 (usage-service.ts); what another process accepted in the moment before it learned
 * of a close is stored after the close, and so is an adjustment of a later statement, never a change
 * of the closed one (docs/statements.md).
 */
export class ClosedPeriods {
  private latest = new Map<string, PeriodVersion>();
  /** The tenants with any month closed or reopened: only their usage needs its month computed (in its zone). */
  private tenantsWithPeriods = new Set<string>();
  /** Changes made here, which a read may not show yet. */
  private readonly noted = new Map<string, PeriodVersion>();
  private zones = new Map<string, TenantSettings>();
  /** Time zones set here, which a read may not show yet. */
  private readonly notedZones = new Map<string, TenantSettings>();

  constructor(
    private readonly reads: ClickHouse,
    private readonly log: Logger,
  ) {}

  start(): () => void {
    this.refresh().catch((error: unknown) => this.log.warn({ err: error }, 'closed_periods_refresh_failed'));
    return refreshEvery(CLOSED_PERIODS_REFRESH_MS, () => this.refresh(), this.log, 'closed_periods_refresh_failed');
  }

  async refresh(): Promise<void> {
    const [versions, settings] = await Promise.all([
      readPeriodVersions(this.reads, null),
      readTenantSettings(this.reads, null),
    ]);
    this.latest = this.withNoted(latestVersions(versions));
    this.tenantsWithPeriods = new Set([...this.latest.values()].map((version) => version.user_id));
    this.zones = this.withNotedZones(settings);
  }

  /** The closed month an instant of this tenant lies in (in its time zone), or null. */
  closedAt(userId: string, instantMs: number): ClosedPeriod | null {
    if (!this.tenantsWithPeriods.has(userId)) return null;
    return closedOnly(this.latest.get(key(userId, periodOf(instantMs, this.timeZoneOf(userId)))));
  }

  /** The time zone of the tenant's months, as last read. */
  timeZoneOf(userId: string): string {
    return this.zones.get(userId)?.time_zone ?? DEFAULT_BILLING_TIME_ZONE;
  }

  /** The tenant's settings as stored now, or as changed here if the store does not show it yet (null: none set). */
  async freshSettings(userId: string): Promise<TenantSettings | null> {
    return this.withNotedZones(await readTenantSettings(this.reads, userId)).get(userId) ?? null;
  }

  /** The time zone of the tenant's months as stored now, with a change made here. */
  async freshTimeZone(userId: string): Promise<string> {
    return (await this.freshSettings(userId))?.time_zone ?? DEFAULT_BILLING_TIME_ZONE;
  }

  noteTimeZone(settings: TenantSettings): void {
    this.notedZones.set(settings.user_id, settings);
    this.zones.set(settings.user_id, settings);
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

  /** The tenant's first close as stored now or made here (reopened or not), or null: it never closed a month. */
  async firstClose(userId: string): Promise<PeriodVersion | null> {
    const own = [...this.withNoted(latestVersions(await readPeriodVersions(this.reads, userId))).values()];
    const closes = own.filter((version) => version.user_id === userId);
    return closes.reduce<PeriodVersion | null>(
      (first, version) => (first === null || version.closed_ms < first.closed_ms ? version : first),
      null,
    );
  }

  note(version: PeriodVersion): void {
    const name = key(version.user_id, version.period);
    this.noted.set(name, version);
    this.latest.set(name, version);
    this.tenantsWithPeriods.add(version.user_id);
  }

  /** The zones read, each replaced by a change made here that the read does not show yet. */
  private withNotedZones(read: readonly TenantSettings[]): Map<string, TenantSettings> {
    const stored = new Map(read.map((settings) => [settings.user_id, settings]));
    for (const [userId, settings] of this.notedZones) {
      const found = stored.get(userId);
      if (found === undefined || found.updated_ms < settings.updated_ms) stored.set(userId, settings);
      else this.notedZones.delete(userId);
    }
    return stored;
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
