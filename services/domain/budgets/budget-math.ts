import type { BudgetRecord } from '../../../schemas/records/budget.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { addDays, addMonths, localDate, startOfLocalDay, startOfWeek } from '../../shared/zoned-time.ts';

/** The calendar period of a budget an instant lies in, in its time zone (epoch ms); null for a per-call cap. */
export function periodBounds(budget: Pick<BudgetRecord, 'period' | 'time_zone'>, atMs: number) {
  if (budget.period === 'none') return null;
  const today = localDate(atMs, budget.time_zone);
  const first =
    budget.period === 'day'
      ? today
      : budget.period === 'week'
        ? startOfWeek(today)
        : { year: today.year, month: today.month, day: 1 };
  const next =
    budget.period === 'day' ? addDays(first, 1) : budget.period === 'week' ? addDays(first, 7) : addMonths(first, 1);
  return { start: startOfLocalDay(first, budget.time_zone), end: startOfLocalDay(next, budget.time_zone) };
}

/**
 * periodBounds at one instant for many budgets: computed once per period kind and zone (a zone's
 * calendar costs several Intl calls, and a tenant may hold thousands of budgets of a few kinds).
 */
export function periodBoundsAt(atMs: number) {
  const known = new Map<string, { start: number; end: number } | null>();
  return (budget: Pick<BudgetRecord, 'period' | 'time_zone'>) => {
    const key = `${budget.period}\u0000${budget.time_zone}`;
    if (!known.has(key)) known.set(key, periodBounds(budget, atMs));
    return known.get(key)!;
  };
}

/** One threshold of a budget as money: `label` as written (`90%`, `20.00`), `amount` what crossing it means. */
export interface Threshold {
  readonly label: string;
  readonly amount: Exact;
}

/** The budget's thresholds as amounts of money, lowest first (a percentage of the amount, or an amount). */
export function thresholdsOf(budget: Pick<BudgetRecord, 'thresholds' | 'amount'>): Threshold[] {
  return budget.thresholds
    .map((label) => ({
      label,
      amount: label.endsWith('%') ? new Exact(budget.amount).times(label.slice(0, -1)).div(100) : new Exact(label),
    }))
    .sort((a, b) => a.amount.comparedTo(b.amount));
}

/**
 * When the spend reaches the amount at the period's rate so far (spent over the time elapsed), as
 * LiteLLM's projected spend does: null when it is reached already, when nothing was spent, or when the
 * rate does not reach it before the period ends.
 */
export function projectedExhaustion(spent: Exact, amount: Exact, startMs: number, endMs: number, nowMs: number) {
  const elapsed = nowMs - startMs;
  if (spent.isZero() || spent.gte(amount) || elapsed <= 0) return null;
  const at = startMs + amount.times(elapsed).div(spent).toNumber();
  return at < endMs ? new Date(Math.ceil(at)).toISOString() : null;
}
