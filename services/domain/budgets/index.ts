/** The budgets module's public surface (docs/budgets.md): code outside services/domain/budgets imports from here only. */
export { periodBounds, periodBoundsAt, projectedExhaustion, thresholdsOf, type Threshold } from './budget-math.ts';
export { Budgets, BUDGETS_REFRESH_MS } from './budget-registry.ts';
export { callSpends, periodSpends, recentCalls, type CallSpend, type PeriodSpend } from './budget-spend.ts';
