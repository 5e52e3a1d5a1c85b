import { Exact } from '../../shared/exact-decimal.ts';
import { COST_DIMENSIONS, PRICE_SCOPES, type CostDimension, type PriceScope } from '../../../schemas/pricing-terms.ts';
import { TOKEN_KINDS, type TokenCounts, type TokenKind } from './token-kinds.ts';

// The shapes of a computed cost, shared by the card's pricing (compute-cost.ts) and the catalogs' (catalog-cost.ts).

export { COST_DIMENSIONS, PRICE_SCOPES, type CostDimension, type PriceScope };

/** One priced part of an event, before the stored rounding: cost = quantity × price ÷ per. */
export interface CostComponent {
  readonly dimension: CostDimension;
  readonly quantity: Exact;
  readonly unit: string;
  readonly price: Exact;
  readonly per: Exact;
  readonly cost: Exact;
  readonly rate_id: string;
}

/** An exact cost, before the stored rounding. */
export interface ComputedCost {
  readonly quantity: Exact;
  readonly cost: Exact;
  readonly unit_cost: Exact;
  readonly rate_ids: readonly string[];
  readonly currency: string;
  readonly components: readonly CostComponent[];
  readonly scope: PriceScope;
}

export type CostInput = { readonly quantity: string; readonly session_duration_seconds?: string | null } & {
  readonly [K in TokenKind]?: string | null;
};

/** The token counts the event carries, or null when it carries none. */
export function tokenCounts(input: CostInput): TokenCounts | null {
  const counts: TokenCounts = {};
  for (const kind of TOKEN_KINDS) {
    const value = input[kind];
    if (value !== undefined && value !== null) counts[kind] = value;
  }
  return Object.keys(counts).length === 0 ? null : counts;
}

/** The cost of the parts, and its quotient by the event's quantity (0 for a quantity of 0). */
export function withTotals(
  quantity: Exact,
  components: readonly CostComponent[],
  currency: string,
  scope: PriceScope,
): ComputedCost {
  const cost = Exact.sum(0, ...components.map((part) => part.cost));
  const unit_cost = quantity.greaterThan(0) ? cost.dividedBy(quantity) : new Exact(0);
  return {
    quantity,
    cost,
    unit_cost,
    rate_ids: [...new Set(components.map((part) => part.rate_id))],
    currency,
    components,
    scope,
  };
}
