import type { Rate, RateCard } from '../../../schemas/rate-card.ts';
import { Exact } from '../exact-decimal.ts';
import { findRate, type RateQuery } from './find-rate.ts';

/** An exact cost from the card, before the stored rounding. */
export interface ComputedCost {
  readonly quantity: Exact;
  readonly cost: Exact;
  readonly unit_cost: Exact;
  readonly rate_ids: readonly string[];
  readonly currency: string;
}

export interface CostInput {
  readonly quantity: string;
  readonly input_tokens?: string | null;
  readonly output_tokens?: string | null;
}

type LookUp = Omit<RateQuery, 'pricing'>;

/**
 * The exact token split when the event carries it, the card prices every side it carries and those
 * sides add up to the quantity; else the quantity rate; null when the card has neither.
 */
export function computeCost(card: RateCard, lookUp: LookUp, input: CostInput): ComputedCost | null {
  return splitTokenCost(card, lookUp, input) ?? quantityCost(card, lookUp, input.quantity);
}

function quantityCost(card: RateCard, lookUp: LookUp, quantityText: string): ComputedCost | null {
  const rate = findRate(card, { ...lookUp, pricing: 'quantity' });
  if (rate === null) return null;
  const quantity = new Exact(quantityText);
  return { quantity, cost: costOf(quantity, rate), unit_cost: new Exact(rate.price).dividedBy(rate.price_per), rate_ids: [rate.id], currency: rate.currency ?? card.currency };
}

function splitTokenCost(card: RateCard, lookUp: LookUp, input: CostInput): ComputedCost | null {
  const sides = (['input_tokens', 'output_tokens'] as const).flatMap((pricing) => {
    const tokens = input[pricing];
    return tokens === undefined || tokens === null ? [] : [{ tokens: new Exact(tokens), rate: findRate(card, { ...lookUp, pricing }) }];
  });
  const priced = sides.flatMap(({ tokens, rate }) => (rate === null ? [] : [{ tokens, rate }]));
  if (priced.length === 0 || priced.length !== sides.length) return null;
  const currencies = new Set(priced.map(({ rate }) => rate.currency ?? card.currency));
  // Never add two currencies: such a pair falls back to the quantity rate.
  if (currencies.size !== 1) return null;
  // The split prices exactly the event's quantity or not at all: sides that do not add up to it
  // (one side left out of 1,200 tokens, or counts that disagree with the quantity) would drop tokens.
  const quantity = Exact.sum(...priced.map(({ tokens }) => tokens));
  if (!quantity.equals(input.quantity)) return null;
  const cost = Exact.sum(...priced.map(({ tokens, rate }) => costOf(tokens, rate)));
  const unit_cost = quantity.greaterThan(0) ? cost.dividedBy(quantity) : new Exact(0);
  return { quantity, cost, unit_cost, rate_ids: priced.map(({ rate }) => rate.id), currency: [...currencies][0] ?? card.currency };
}

function costOf(quantity: Exact, rate: Rate): Exact {
  // Multiply before dividing: with price_per a power of ten the quotient is exact.
  return quantity.times(rate.price).dividedBy(rate.price_per);
}
