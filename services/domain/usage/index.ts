/** The usage module's public surface: code outside services/domain/usage imports from here only. */
export { reportedCostProblems } from './reported-cost.ts';
export { usageQuantities, type Quantities } from './usage-quantity.ts';
