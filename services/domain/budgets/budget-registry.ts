import type { BudgetRecord } from '../../../schemas/records/budget.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { budgetsSignature, readBudgets } from '../../shared/clickhouse/tables/budgets.ts';
import type { Logger } from '../../shared/logger.ts';
import { refreshEvery } from '../../shared/refresh-every.ts';

/** How often each process reads the budgets again: another process's change reaches it this late at most. */
export const BUDGETS_REFRESH_MS = 2_000;
/**
 * How far back each refresh reads the versions stored: far more than a refresh's interval, so that a
 * version stored late (an insert in flight, a writer behind, clocks apart) is still read; every minute
 * the whole table is read again all the same.
 */
const REFRESH_OVERLAP_MS = 60_000;
const FULL_READ_EVERY = 30;

/**
 * The budgets as this process knows them: read from the budgets table every BUDGETS_REFRESH_MS (what
 * changed lately; every minute all of it), and at once for a change made here, the highest version of
 * each winning. Indexed by tenant, so that a tenant's thousands cost a lookup, not a scan, on every
 * evaluation, gate and route. One instance per process, shared by the routes, the gate and the evaluation.
 */
export class Budgets {
  private readonly latestById = new Map<string, BudgetRecord>();
  private readonly byTenant = new Map<string, Map<string, BudgetRecord>>();
  private refreshes = 0;
  private changeCount = 0;
  /** The table's signature when it was last read (budgetsSignature). */
  private signature = '';

  constructor(
    private readonly ch: ClickHouse,
    private readonly log: Logger,
  ) {}

  async start(): Promise<() => void> {
    await this.refresh();
    return refreshEvery(BUDGETS_REFRESH_MS, () => this.refresh(), this.log, 'budgets_refresh_failed');
  }

  async refresh(): Promise<void> {
    const full = this.refreshes++ % FULL_READ_EVERY === 0;
    // Nothing stored since the last read: the versions of the last minute are not read again (after a
    // tenant made thousands, they would be, every refresh for a minute).
    const signature = await budgetsSignature(this.ch);
    if (!full && signature === this.signature) return;
    for (const budget of await readBudgets(this.ch, full ? null : Date.now() - REFRESH_OVERLAP_MS)) this.note(budget);
    this.signature = signature;
  }

  /** A version of a budget, kept if it is the newest known. */
  note(budget: BudgetRecord): void {
    const known = this.latestById.get(budget.id)?.version ?? 0;
    if (known > budget.version) return;
    if (known < budget.version) this.changeCount += 1;
    this.latestById.set(budget.id, budget);
    let tenant = this.byTenant.get(budget.user_id);
    if (tenant === undefined) this.byTenant.set(budget.user_id, (tenant = new Map()));
    if (budget.deleted_at === null) tenant.set(budget.id, budget);
    else tenant.delete(budget.id);
  }

  /** Grows whenever a budget is learned of or a newer version of one: what was derived from them is stale. */
  get changes(): number {
    return this.changeCount;
  }

  /** The latest version of a budget (a deleted one included), or null. */
  latest(id: string): BudgetRecord | null {
    return this.latestById.get(id) ?? null;
  }

  /** Every budget not deleted, of one tenant or of all, in the order this process first learned of them. */
  all(userId: string | null = null): BudgetRecord[] {
    if (userId !== null) return [...(this.byTenant.get(userId)?.values() ?? [])];
    return [...this.byTenant.values()].flatMap((tenant) => [...tenant.values()]);
  }

  /** How many budgets a tenant holds. */
  count(userId: string): number {
    return this.byTenant.get(userId)?.size ?? 0;
  }
}
