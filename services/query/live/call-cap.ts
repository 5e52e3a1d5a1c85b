import type { BudgetRecord } from '../../../schemas/records/budget.ts';
import type { Budgets } from '../../domain/budgets/index.ts';
import { Exact } from '../../shared/exact-decimal.ts';

/** What a call has spent, as its cost stream shows it (live usage included in the items). */
export interface CallCosts {
  readonly items: readonly { readonly provider: string; readonly service: string; readonly cost: string }[];
  readonly events: readonly {
    readonly provider: string;
    readonly service: string;
    readonly model: string | null;
    readonly total_cost: string;
  }[];
}

/** A call's standing against its lowest per-call cap, as its cost stream sends it. */
export interface CapStanding {
  readonly allowed: boolean;
  readonly spent: string;
  readonly cap: string;
  readonly remaining: string;
  readonly budget_id: string;
}

/** The per-call caps that cover a call: its tenant's, for every agent or for the call's own. */
export function capsOfCall(
  budgets: Pick<Budgets, 'all'>,
  call: { readonly user_id: string; readonly agent_id: string | null },
): BudgetRecord[] {
  return budgets
    .all(call.user_id)
    .filter((budget) => budget.per_call && (budget.agent_id === null || budget.agent_id === call.agent_id));
}

/**
 * The call's standing against the per-call caps that cover it (docs/budgets.md#caps), from what its cost
 * stream shows: its items, live usage included, by provider and service; a cap filtered by model counts
 * the stored events listed. Null without a cap. The tightest cap (least remaining) is the one answered.
 */
export function capStanding(caps: readonly BudgetRecord[], costs: CallCosts): CapStanding | null {
  const standings = caps.map((cap) => {
    const { provider, service, model } = cap.filter;
    const matches = (row: { provider: string; service: string }) =>
      (provider === undefined || row.provider === provider) && (service === undefined || row.service === service);
    const spent =
      model === undefined
        ? Exact.sum(0, ...costs.items.filter(matches).map((item) => item.cost))
        : Exact.sum(
            0,
            ...costs.events.filter((event) => matches(event) && event.model === model).map((event) => event.total_cost),
          );
    return { cap, spent, remaining: new Exact(cap.amount).minus(spent) };
  });
  const tightest = standings.sort((a, b) => a.remaining.comparedTo(b.remaining))[0];
  if (tightest === undefined) return null;
  return {
    allowed: tightest.remaining.gt(0),
    spent: tightest.spent.toFixed(),
    cap: new Exact(tightest.cap.amount).toFixed(),
    remaining: Exact.max(0, tightest.remaining).toFixed(),
    budget_id: tightest.cap.id,
  };
}
