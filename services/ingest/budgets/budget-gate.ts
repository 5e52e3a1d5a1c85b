import type { BudgetRecord } from '../../../schemas/records/budget.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { callSpends, periodSpends, type Budgets, type PeriodSpend } from '../../domain/budgets/index.ts';

/** How long a tenant's spend, read for the gate, is taken as it stands. */
export const GATE_SPEND_TTL_MS = 1_000;

export interface BudgetGateDeps {
  readonly budgets: Budgets;
  readonly reads: ClickHouse;
  readonly now?: () => number;
}

/**
 * Where budgets act on calls (docs/budgets.md#enforcement): a new call of a tenant (or agent) whose
 * blocking budget is spent is refused with a 402 naming it, and a running call's budget answer says
 * whether its cap or a blocking budget is spent. Usage of calls already running is always taken. A
 * tenant without a blocking budget costs nothing here; the spend is read at most once a second.
 */
export function createBudgetGate({ budgets, reads, now = Date.now }: BudgetGateDeps) {
  const kept = new Map<string, { readonly at: number; readonly spends: Map<string, PeriodSpend> }>();

  const covers = (budget: BudgetRecord, agentId: string | null) =>
    budget.agent_id === null || budget.agent_id === agentId;

  /** The blocking period budgets of the call's scope that are spent now. */
  async function spentBlocks(userId: string, agentId: string | null) {
    const blocking = budgets
      .all(userId)
      .filter((budget) => budget.action === 'block' && !budget.per_call && covers(budget, agentId));
    if (blocking.length === 0) return [];
    const nowMs = now();
    let entry = kept.get(userId);
    if (
      entry === undefined ||
      nowMs - entry.at >= GATE_SPEND_TTL_MS ||
      blocking.some((b) => !entry!.spends.has(b.id))
    ) {
      entry = { at: nowMs, spends: await periodSpends(reads, blocking, nowMs) };
      kept.set(userId, entry);
      for (const [user, { at }] of kept) if (nowMs - at >= GATE_SPEND_TTL_MS * 60) kept.delete(user);
    }
    const spends = entry.spends;
    return blocking.flatMap((budget) => {
      const spend = spends.get(budget.id);
      return spend !== undefined && spend.spent.gte(budget.amount) ? [{ budget, spend }] : [];
    });
  }

  return {
    /** Refuses a new call of a spent blocking budget's scope with a 402 naming it. */
    async admit(userId: string, agentId: string | null): Promise<void> {
      const [spent] = await spentBlocks(userId, agentId);
      if (spent === undefined) return;
      const { budget, spend } = spent;
      throw AppError.of(
        'PAYMENT_REQUIRED',
        `Budget ${budget.name} (${budget.id}) of user ${userId} is spent: ${spend.spent.toFixed()} of ${new Exact(budget.amount).toFixed()} this ${budget.period}, until ${new Date(spend.end).toISOString()}; new calls are refused until it resets or is raised`,
      );
    },

    /** A running call's standing against its per-call caps and its scope's blocking budgets. */
    async ofCall(session: { id: string; user_id: string; agent_id: string | null }) {
      const caps = budgets.all(session.user_id).filter((budget) => budget.per_call && covers(budget, session.agent_id));
      const whole = { user_id: session.user_id, agent_id: null, filter: {} };
      const standings = await Promise.all(
        caps.map(async (cap) => {
          const [call] = await callSpends(reads, cap, [session.id]);
          const spent = call?.spent ?? new Exact(0);
          return { cap, spent, remaining: new Exact(cap.amount).minus(spent) };
        }),
      );
      const tightest = standings.sort((a, b) => a.remaining.comparedTo(b.remaining))[0];
      const spent = tightest?.spent ?? (await callSpends(reads, whole, [session.id]))[0]?.spent ?? new Exact(0);
      const blocked = (await spentBlocks(session.user_id, session.agent_id)).length > 0;
      return {
        session_id: session.id,
        allowed: !blocked && (tightest === undefined || tightest.remaining.gt(0)),
        spent: spent.toFixed(),
        cap: tightest === undefined ? null : new Exact(tightest.cap.amount).toFixed(),
        remaining: tightest === undefined ? null : Exact.max(0, tightest.remaining).toFixed(),
        budget_id: tightest?.cap.id ?? null,
      };
    },
  };
}

export type BudgetGate = ReturnType<typeof createBudgetGate>;
