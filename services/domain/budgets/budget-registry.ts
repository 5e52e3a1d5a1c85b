import type { BudgetRecord } from '../../../schemas/records/budget.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { readBudgets } from '../../shared/clickhouse/tables/budgets.ts';
import type { Logger } from '../../shared/logger.ts';

/** How often each process reads the budgets again: another process's change reaches it this late at most. */
export const BUDGETS_REFRESH_MS = 2_000;

/**
 * The budgets as this process knows them: read from the budgets table every BUDGETS_REFRESH_MS, and at
 * once for a change made here (which the store may not show yet). One instance per process, shared by
 * the routes, the session gate and the evaluation.
 */
export class Budgets {
  private stored = new Map<string, BudgetRecord>();
  private readonly noted = new Map<string, BudgetRecord>();
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ch: ClickHouse,
    private readonly log: Logger,
  ) {}

  async start(): Promise<() => void> {
    await this.refresh();
    const tick = () =>
      this.refresh().catch((error: unknown) => this.log.warn({ err: error }, 'budgets_refresh_failed'));
    this.timer = setInterval(tick, BUDGETS_REFRESH_MS);
    this.timer.unref();
    return () => {
      if (this.timer !== null) clearInterval(this.timer);
    };
  }

  async refresh(): Promise<void> {
    this.stored = new Map((await readBudgets(this.ch)).map((budget) => [budget.id, budget]));
  }

  note(budget: BudgetRecord): void {
    this.noted.set(budget.id, budget);
  }

  /** The latest version of a budget (a deleted one included), or null. */
  latest(id: string): BudgetRecord | null {
    const stored = this.stored.get(id);
    const noted = this.noted.get(id);
    if (noted === undefined) return stored ?? null;
    if (stored !== undefined && stored.version >= noted.version) {
      this.noted.delete(id);
      return stored;
    }
    return noted;
  }

  /** Every budget not deleted, of one tenant or of all, oldest first. */
  all(userId: string | null = null): BudgetRecord[] {
    const ids = new Set([...this.stored.keys(), ...this.noted.keys()]);
    return [...ids]
      .map((id) => this.latest(id)!)
      .filter((budget) => budget.deleted_at === null && (userId === null || budget.user_id === userId))
      .sort((a, b) => a.created_at.localeCompare(b.created_at) || a.id.localeCompare(b.id));
  }
}
