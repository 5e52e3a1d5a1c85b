import type { Rate, RateCard } from '../../../schemas/rate-card.ts';
import { Exact } from '../exact-decimal.ts';
import type { Catalogs } from './catalogs.ts';
import { findRate, type RateQuery } from './find-rate.ts';
import { resolveProvider } from './provider-names.ts';
import { chargedTokens, TOKEN_KINDS, type TokenCounts, type TokenKind } from './token-kinds.ts';

/** What one price multiplied: the event's quantity, one token kind, or (a few catalog models) the request. */
export const COST_DIMENSIONS = ['quantity', ...TOKEN_KINDS, 'requests'] as const;
export type CostDimension = (typeof COST_DIMENSIONS)[number];

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

/** Where a price came from: the rate card (a tenant's own entries included) or the built-in catalog. */
export const PRICE_SCOPES = ['card', 'tenant', 'catalog'] as const;
export type PriceScope = (typeof PRICE_SCOPES)[number];

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

export type CostInput = { readonly quantity: string } & { readonly [K in TokenKind]?: string | null };

export type LookUp = Omit<RateQuery, 'pricing'>;

/**
 * The query for one pricing, written out: `{ ...lookUp, pricing }` costs V8 (Node 20) about 0.8 µs an
 * object, a spread followed by more properties, and pricing asks it up to nine times an event.
 */
export function rateQuery(lookUp: LookUp, pricing: RateQuery['pricing']): RateQuery {
  return {
    event_type: lookUp.event_type,
    provider: lookUp.provider,
    model: lookUp.model ?? null,
    user_id: lookUp.user_id,
    at: lookUp.at,
    pricing,
  };
}

/**
 * The card first (a tenant's entry, then the general ones): the exact token split when the event
 * carries token counts and the card prices every base kind it carries, else the quantity rate. Then
 * the built-in catalog beneath it: an LLM model's price per token kind, a speech provider's price per
 * minute or character. null when neither has a price.
 */
export function computeCost(
  card: RateCard,
  lookUp: LookUp,
  input: CostInput,
  catalogs: Catalogs | null = null,
): ComputedCost | null {
  return (
    splitTokenCost(card, lookUp, input) ??
    quantityCost(card, lookUp, input.quantity) ??
    (catalogs === null ? null : catalogCost(card, catalogs, lookUp, input))
  );
}

function quantityCost(card: RateCard, lookUp: LookUp, quantityText: string): ComputedCost | null {
  const rate = findRate(card, rateQuery(lookUp, 'quantity'));
  if (rate === null) return null;
  const quantity = new Exact(quantityText);
  const component = cardComponent('quantity', quantity, rate);
  return {
    quantity,
    cost: component.cost,
    unit_cost: numbersOf(rate).unitPrice,
    rate_ids: [rate.id],
    currency: currencyOf(rate, card),
    components: [component],
    scope: scopeOf([rate]),
  };
}

/** The token counts the event carries, or null when it carries none. */
export function tokenCounts(input: CostInput): TokenCounts | null {
  const counts: TokenCounts = {};
  for (const kind of TOKEN_KINDS) {
    const value = input[kind];
    if (value !== undefined && value !== null) counts[kind] = value;
  }
  return Object.keys(counts).length === 0 ? null : counts;
}

function splitTokenCost(card: RateCard, lookUp: LookUp, input: CostInput): ComputedCost | null {
  const counts = tokenCounts(input);
  if (counts === null) return null;
  // The base kinds the event carries must each have a price; a part without its own falls in its whole.
  const carried = (['input_tokens', 'output_tokens'] as const).filter((kind) => counts[kind] !== undefined);
  if (carried.length === 0) return null;
  const rates = new Map<TokenKind, Rate>();
  for (const kind of TOKEN_KINDS) {
    const rate = findRate(card, rateQuery(lookUp, kind));
    if (rate !== null) rates.set(kind, rate);
    else if ((carried as readonly TokenKind[]).includes(kind)) return null;
  }
  const charged = [...chargedTokens(counts, new Set(rates.keys()))]
    .filter(([kind, tokens]) => counts[kind] !== undefined || !tokens.isZero())
    .sort(([a], [b]) => TOKEN_KINDS.indexOf(a) - TOKEN_KINDS.indexOf(b));
  const used = charged.map(([kind]) => rates.get(kind)!);
  const currencies = new Set(used.map((rate) => currencyOf(rate, card)));
  // Never add two currencies: such a mix falls back to the quantity rate.
  if (currencies.size !== 1) return null;
  const components = charged.map(([kind, tokens]) => cardComponent(kind, tokens, rates.get(kind)!));
  // The split prices exactly the event's quantity or not at all: counts that disagree with the quantity
  // (one side left out of 1,200 tokens) would drop tokens.
  const quantity = Exact.sum(0, ...components.map((part) => part.quantity));
  if (!quantity.equals(input.quantity)) return null;
  return withTotals(quantity, components, [...currencies][0]!, scopeOf(used));
}

function catalogCost(card: RateCard, catalogs: Catalogs, lookUp: LookUp, input: CostInput): ComputedCost | null {
  const provider = resolveProvider(card.provider_aliases, lookUp.provider);
  if (lookUp.event_type === 'llm_tokens') {
    const counts = tokenCounts(input);
    if (counts === null || lookUp.model === undefined || lookUp.model === null) return null;
    const priced = catalogs.llm.price(provider, lookUp.model, counts, lookUp.at);
    if (priced === null) return null;
    const components = priced.components.map((part): CostComponent => ({
      dimension: part.dimension,
      quantity: part.quantity,
      unit: part.dimension === 'requests' ? 'request' : 'token',
      price: part.price,
      per: part.per,
      cost: part.cost,
      rate_id: priced.rate_id,
    }));
    const quantity = Exact.sum(
      0,
      ...components.filter((part) => part.dimension !== 'requests').map((part) => part.quantity),
    );
    if (!quantity.equals(input.quantity)) return null;
    return withTotals(quantity, components, catalogs.currency, 'catalog');
  }
  const quantity = new Exact(input.quantity);
  const priced = catalogs.speech.price(provider, lookUp.event_type, lookUp.model ?? null, quantity, lookUp.at);
  if (priced === null) return null;
  const component: CostComponent = {
    dimension: 'quantity',
    quantity: priced.quantity,
    unit: priced.entry.unit,
    price: priced.price,
    per: priced.per,
    cost: priced.cost,
    rate_id: priced.entry.id,
  };
  return withTotals(quantity, [component], catalogs.currency, 'catalog');
}

function withTotals(
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

function cardComponent(dimension: CostDimension, quantity: Exact, rate: Rate): CostComponent {
  const { price, per } = numbersOf(rate);
  // Multiply before dividing: with price_per a power of ten the quotient is exact.
  const cost = quantity.times(price).dividedBy(per);
  return { dimension, quantity, unit: rate.unit, price, per, cost, rate_id: rate.id };
}

const numbers = new WeakMap<Rate, { readonly price: Exact; readonly per: Exact; readonly unitPrice: Exact }>();

/** A rate's price, its unit and their quotient, parsed once per rate: a card's rates are frozen and an Exact is immutable. */
function numbersOf(rate: Rate): { readonly price: Exact; readonly per: Exact; readonly unitPrice: Exact } {
  let parsed = numbers.get(rate);
  if (parsed === undefined) {
    const price = new Exact(rate.price);
    const per = new Exact(rate.price_per);
    parsed = { price, per, unitPrice: price.dividedBy(per) };
    numbers.set(rate, parsed);
  }
  return parsed;
}

function currencyOf(rate: Rate, card: RateCard): string {
  return rate.currency ?? card.currency;
}

function scopeOf(rates: readonly Rate[]): PriceScope {
  return rates.some((rate) => rate.user_id !== undefined) ? 'tenant' : 'card';
}
