import type { Rate, RateCard } from '../../../schemas/rate-card.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { catalogCost } from './catalog-cost.ts';
import type { Catalogs } from './catalogs.ts';
import {
  COST_DIMENSIONS,
  PRICE_SCOPES,
  tokenCounts,
  withTotals,
  type ComputedCost,
  type CostComponent,
  type CostDimension,
  type CostInput,
  type PriceScope,
} from './cost-parts.ts';
import { CARD_TIER, cardTierOf, findRate, type CardTier, type LookUp, type RateQuery } from './find-rate.ts';
import { chargedTokens, TOKEN_KINDS, type TokenKind } from './token-kinds.ts';

export {
  COST_DIMENSIONS,
  PRICE_SCOPES,
  tokenCounts,
  type ComputedCost,
  type CostComponent,
  type CostDimension,
  type CostInput,
  type PriceScope,
};

/**
 * The query for one pricing, written out: V8 (Node 20) builds `{ ...lookUp, pricing }`, a spread followed
 * by more properties, slowly, and pricing asks it up to eleven times an event.
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
 * The most specific price first, each step pricing the whole event or passing it on: a tenant's own
 * entries; a card entry for the event's provider and model; the catalog's price of that model (an LLM
 * model, a speech model or its family); a card entry for the provider; the catalog's provider-wide
 * speech price; a card entry for any provider. A card step takes the exact token split when the event
 * carries token counts and the entries of that step or a more specific one price every base kind it
 * carries, else the quantity rate. null when nothing prices it.
 */
export function computeCost(
  card: RateCard,
  lookUp: LookUp,
  input: CostInput,
  catalogs: Catalogs | null = null,
): ComputedCost | null {
  const rates = cardRates(card, lookUp, input);
  let catalog: { cost: ComputedCost; specific: boolean } | null | undefined;
  const fromCatalog = (specific: boolean): ComputedCost | null => {
    if (catalogs === null) return null;
    if (catalog === undefined) catalog = catalogCost(card, catalogs, lookUp, input);
    return catalog !== null && catalog.specific === specific ? catalog.cost : null;
  };
  return (
    cardCost(card, rates, input, CARD_TIER.tenant) ??
    cardCost(card, rates, input, CARD_TIER.model) ??
    fromCatalog(true) ??
    cardCost(card, rates, input, CARD_TIER.provider) ??
    fromCatalog(false) ??
    cardCost(card, rates, input, CARD_TIER.any)
  );
}

/** The card's entry in force for each token kind the event could be split by, and for its quantity; each the most specific that applies. */
interface CardRates {
  readonly tokens: ReadonlyMap<TokenKind, Rate> | null;
  readonly quantity: Rate | null;
  /** The most specific tier of any of them: no card step before it prices anything. */
  readonly first: CardTier | null;
}

function cardRates(card: RateCard, lookUp: LookUp, input: CostInput): CardRates {
  const counts = tokenCounts(input);
  let tokens: Map<TokenKind, Rate> | null = null;
  let first: CardTier | null = null;
  if (counts !== null && (counts.input_tokens !== undefined || counts.output_tokens !== undefined)) {
    tokens = new Map();
    for (const kind of TOKEN_KINDS) {
      const rate = findRate(card, rateQuery(lookUp, kind));
      if (rate === null) continue;
      tokens.set(kind, rate);
      const tier = cardTierOf(rate);
      if (first === null || tier < first) first = tier;
    }
  }
  const quantity = findRate(card, rateQuery(lookUp, 'quantity'));
  if (quantity !== null && (first === null || cardTierOf(quantity) < first)) first = cardTierOf(quantity);
  return { tokens, quantity, first };
}

/** The card's price using only entries of `tier` or a more specific one; null when they do not price the event. */
function cardCost(card: RateCard, rates: CardRates, input: CostInput, tier: CardTier): ComputedCost | null {
  if (rates.first === null || rates.first > tier) return null;
  const split = rates.tokens === null ? null : splitTokenCost(card, rates.tokens, input, tier);
  if (split !== null) return split;
  return rates.quantity !== null && cardTierOf(rates.quantity) <= tier
    ? quantityCost(card, rates.quantity, input.quantity)
    : null;
}

function quantityCost(card: RateCard, rate: Rate, quantityText: string): ComputedCost {
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

function splitTokenCost(
  card: RateCard,
  found: ReadonlyMap<TokenKind, Rate>,
  input: CostInput,
  tier: CardTier,
): ComputedCost | null {
  const counts = tokenCounts(input)!;
  const rates = new Map<TokenKind, Rate>();
  for (const [kind, rate] of found) if (cardTierOf(rate) <= tier) rates.set(kind, rate);
  // The base kinds the event carries must each have a price; a part without its own falls in its whole.
  for (const kind of ['input_tokens', 'output_tokens'] as const)
    if (counts[kind] !== undefined && !rates.has(kind)) return null;
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
