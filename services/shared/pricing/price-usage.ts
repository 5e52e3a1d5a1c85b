import type { RateCard } from '../../../schemas/rate-card.ts';
import { computeCost, type ComputedCost } from './compute-cost.ts';
import { Exact, toStoredDecimal } from '../exact-decimal.ts';

/** One usage event as the pricer needs it; every number is a plain decimal string. */
export interface UsageToPrice {
  readonly event_type: string;
  readonly provider: string;
  readonly model?: string | null;
  readonly user_id: string;
  readonly occurred_at: Date;
  /** In the event type's unit: minutes, tokens or characters. */
  readonly quantity: string;
  readonly input_tokens?: string | null;
  readonly output_tokens?: string | null;
  readonly reported_unit_cost?: string | null;
  readonly reported_total_cost?: string | null;
}

export type CostSource = 'computed' | 'reported' | 'unpriced';

/** Amounts rounded to 18 decimals, as stored; `quantity` is the one priced (input + output for a token split). */
export interface PricedUsage {
  readonly quantity: string;
  readonly cost: string;
  readonly unit_cost: string;
  readonly unit: string;
  readonly service: string;
  readonly cost_source: CostSource;
  /** Ids of the rates applied, comma-joined for a token split; '' when none. */
  readonly rate_id: string;
  readonly currency: string;
  /** The sender's total disagrees with the card by more than 1%: worth a look, never a rejection. */
  readonly reconcile: boolean;
}

// Relative difference above which a reported total is flagged.
const RECONCILE_TOLERANCE = new Exact('0.01');

/**
 * The cost of one usage event: from the card when it has a rate, else the sender's own figures,
 * else zero and 'unpriced' (kept, so the usage is never lost and can be repriced later).
 * Throws only on inputs that are not decimal strings, which ingest has already ruled out.
 */
export function priceUsage(card: RateCard, usage: UsageToPrice): PricedUsage {
  const service = Object.hasOwn(card.services, usage.event_type) ? card.services[usage.event_type] : undefined;
  const described = { unit: service?.unit ?? '', service: service?.service ?? '' };
  const lookUp = { event_type: usage.event_type, provider: usage.provider, model: usage.model ?? null, user_id: usage.user_id, at: usage.occurred_at };
  const computed = computeCost(card, lookUp, usage);
  if (computed !== null) return { ...described, ...fromCard(computed, usage.reported_total_cost ?? null) };
  return { ...described, ...fromSender(usage), rate_id: '', currency: card.currency, reconcile: false };
}

function fromCard(computed: ComputedCost, reportedTotal: string | null): Omit<PricedUsage, 'unit' | 'service'> {
  const cost = toStoredDecimal(computed.cost);
  return {
    quantity: toStoredDecimal(computed.quantity),
    cost,
    unit_cost: toStoredDecimal(computed.unit_cost),
    cost_source: 'computed',
    rate_id: computed.rate_ids.join(','),
    currency: computed.currency,
    reconcile: reportedTotal !== null && disagrees(new Exact(cost), new Exact(reportedTotal)),
  };
}

function fromSender(usage: UsageToPrice): Pick<PricedUsage, 'quantity' | 'cost' | 'unit_cost' | 'cost_source'> {
  const quantity = new Exact(usage.quantity);
  const unitCost = usage.reported_unit_cost == null ? null : new Exact(usage.reported_unit_cost);
  if (usage.reported_total_cost != null) {
    const cost = new Exact(usage.reported_total_cost);
    const perUnit = unitCost ?? (quantity.greaterThan(0) ? cost.dividedBy(quantity) : new Exact(0));
    return { quantity: toStoredDecimal(quantity), cost: toStoredDecimal(cost), unit_cost: toStoredDecimal(perUnit), cost_source: 'reported' };
  }
  if (unitCost !== null) {
    return { quantity: toStoredDecimal(quantity), cost: toStoredDecimal(quantity.times(unitCost)), unit_cost: toStoredDecimal(unitCost), cost_source: 'reported' };
  }
  return { quantity: toStoredDecimal(quantity), cost: '0', unit_cost: '0', cost_source: 'unpriced' };
}

/** Compared with the stored (rounded) cost, so the flag agrees with what a reader sees. */
function disagrees(computed: Exact, reported: Exact): boolean {
  if (computed.isZero()) return !reported.isZero();
  return reported.minus(computed).abs().greaterThan(computed.abs().times(RECONCILE_TOLERANCE));
}
