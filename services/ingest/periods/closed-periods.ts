import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { readClosedPeriods, type ClosedPeriod } from '../../shared/clickhouse/tables/billing-periods.ts';
import type { Logger } from '../../shared/logger.ts';
import { periodOf } from '../../shared/validation/billing-period.ts';

/** How often each ingest process reads the closed months again: another process's close reaches it this late at most. */
export const CLOSED_PERIODS_REFRESH_MS = 2_000;

/**
 * The tenants' closed months as this ingest process knows them: read from billing_periods every
 * CLOSED_PERIODS_REFRESH_MS, and at once for a close made here. Usage of a closed month is refused
 * with a 409 (usage-service.ts); what another process accepted in the moment before it learned of a
 * close is stored after the close, and so is an adjustment of a later statement, never a change of
 * the closed one (docs/statements.md).
 */
export class ClosedPeriods {
  private closed = new Map<string, ClosedPeriod>();
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
    const read = await readClosedPeriods(this.reads, null);
    const next = new Map(read.map((entry) => [key(entry.user_id, entry.period), entry]));
    // A close made here a moment ago may not be stored yet: it stays known.
    for (const [name, entry] of this.closed) if (!next.has(name)) next.set(name, entry);
    this.closed = next;
  }

  /** The closed month an instant of this tenant lies in, or null. */
  closedAt(userId: string, instantMs: number): ClosedPeriod | null {
    return this.closed.get(key(userId, periodOf(instantMs))) ?? null;
  }

  /** The tenant's closed months as stored now, and those closed here (for decisions that must be exact). */
  async fresh(userId: string): Promise<ClosedPeriod[]> {
    const stored = await readClosedPeriods(this.reads, userId);
    const known = [...this.closed.values()].filter(
      (entry) => entry.user_id === userId && !stored.some((s) => s.period === entry.period),
    );
    return [...stored, ...known];
  }

  note(entry: ClosedPeriod): void {
    this.closed.set(key(entry.user_id, entry.period), entry);
  }
}

const key = (userId: string, period: string) => `${userId}\u0000${period}`;
