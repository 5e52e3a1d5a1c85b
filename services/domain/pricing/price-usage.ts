import { COST_SOURCES, type CostSource } from '../../../schemas/pricing-terms.ts';
import type { RateCard } from '../../../schemas/rate-card.ts';
import type { Catalogs } from './catalogs.ts';
import { computeCost, rateQuery, type ComputedCost, type CostDimension, type PriceScope } from './compute-cost.ts';
import { Exact, toStoredDecimal } from '../../shared/exact-decimal.ts';
import { CARD_TIER, cardTierOf, findRate, type CardTier, type LookUp } from './find-rate.ts';
import { catalogProviderOf } from './catalog-cost.ts';
import { scaledCost } from './quantity-price.ts';
import { TOKEN_KINDS, type TokenKind } from './token-kinds.ts';

/** One usage event as the pricer needs it; every number is a plain decimal string. */
export type UsageToPrice = {
  readonly event_type: string;
  readonly provider: string;
  readonly model?: string | null;
  readonly user_id: string;
  readonly occurred_at: Date;
  /** In the event type's unit: minutes, tokens or characters. */
  readonly quantity: string;
  readonly reported_unit_cost?: string | null;
  readonly reported_total_cost?: string | null;
  /** A realtime model's connected time, in seconds (an LLM event's; priced where the vendor bills time). */
  readonly session_duration_seconds?: string | null;
} & { readonly [K in TokenKind]?: string | null };

export { COST_SOURCES, type CostSource };

/** One priced part, as stored: every amount a decimal string rounded to 18 decimals. */
export interface StoredComponent {
  readonly dimension: CostDimension;
  readonly quantity: string;
  readonly unit: string;
  readonly price: string;
  readonly per: string;
  readonly cost: string;
  readonly rate_id: string;
}

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
  /** The priced parts (one for a quantity price, one per token kind for a split); empty unless computed. */
  readonly components: readonly StoredComponent[];
  /** Where the price came from when computed: the card, a tenant's entry, or the catalog; null otherwise. */
  readonly scope: PriceScope | null;
}

// Relative difference above which a reported total is flagged.
const RECONCILE_TOLERANCE = new Exact('0.01');

/**
 * The cost of one usage event: from the card when it has a rate, else the sender's own figures,
 * else zero and 'unpriced' (kept, so the usage is never lost and can be repriced later).
 * Throws only on inputs that are not decimal strings, which ingest has already ruled out.
 * An event a card quantity rate prices takes the scaled path (BigInts, quantity-price.ts), which gives
 * what priceUsageExactly gives to the last digit; every other event is priced by that.
 */
export function priceUsage(card: RateCard, usage: UsageToPrice, catalogs: Catalogs | null = null): PricedUsage {
  return priceScaled(card, usage, catalogs) ?? priceUsageExactly(card, usage, catalogs);
}

/** priceUsage with Exact throughout: the reference the scaled path is proved against (price-usage.property.test.ts). */
export function priceUsageExactly(card: RateCard, usage: UsageToPrice, catalogs: Catalogs | null = null): PricedUsage {
  const described = describedOf(card, usage.event_type);
  const computed = computeCost(card, lookUpOf(usage), usage, catalogs);
  if (computed !== null) return fromCard(described, computed, usage.reported_total_cost ?? null);
  const sent = fromSender(usage);
  // Written out, never `{ ...described, ...sent }`: V8 (Node 20) takes microseconds over two spreads.
  return {
    unit: described.unit,
    service: described.service,
    quantity: sent.quantity,
    cost: sent.cost,
    unit_cost: sent.unit_cost,
    cost_source: sent.cost_source,
    rate_id: '',
    currency: card.currency,
    reconcile: false,
    components: [],
    scope: null,
  };
}

function describedOf(card: RateCard, eventType: string): Pick<PricedUsage, 'unit' | 'service'> {
  const service = Object.hasOwn(card.services, eventType) ? card.services[eventType] : undefined;
  return { unit: service?.unit ?? '', service: service?.service ?? '' };
}

function lookUpOf(usage: UsageToPrice): LookUp {
  return {
    event_type: usage.event_type,
    provider: usage.provider,
    model: usage.model ?? null,
    user_id: usage.user_id,
    at: usage.occurred_at,
  };
}

/**
 * What priceUsageExactly gives an event without token counts or connected time that a card quantity
 * rate prices, on the scaled path; null where that path does not apply (computeCost tries the token
 * split first, and with no token counts finds this same rate, unless a catalog price is more specific).
 */
function priceScaled(card: RateCard, usage: UsageToPrice, catalogs: Catalogs | null): PricedUsage | null {
  for (const kind of TOKEN_KINDS) if (usage[kind] != null) return null;
  if (usage.session_duration_seconds != null) return null;
  const rate = findRate(card, rateQuery(lookUpOf(usage), 'quantity'));
  if (rate === null || catalogOutranks(card, usage, cardTierOf(rate), catalogs)) return null;
  const scaled = scaledCost(rate, usage.quantity);
  if (scaled === null) return null;
  const reportedTotal = usage.reported_total_cost ?? null;
  const described = describedOf(card, usage.event_type);
  return {
    unit: described.unit,
    service: described.service,
    quantity: scaled.quantity,
    cost: scaled.cost,
    unit_cost: scaled.unitCost,
    cost_source: 'computed',
    rate_id: rate.id,
    currency: rate.currency ?? card.currency,
    reconcile: reportedTotal !== null && disagrees(new Exact(scaled.cost), new Exact(reportedTotal)),
    components: [
      {
        dimension: 'quantity',
        quantity: scaled.quantity,
        unit: rate.unit,
        price: scaled.priceText,
        per: scaled.perText,
        cost: scaled.cost,
        rate_id: rate.id,
      },
    ],
    scope: rate.user_id === undefined ? 'card' : 'tenant',
  };
}

/**
 * Whether a catalog price comes before a card entry of this tier (computeCost's order): a model's own
 * (a speech entry for it or its family, a transcription model's price per hour) before a provider-wide
 * card entry, a provider-wide speech entry before a card entry for any provider. Without token counts
 * or connected time, an LLM event has nothing the catalog prices.
 */
function catalogOutranks(card: RateCard, usage: UsageToPrice, tier: CardTier, catalogs: Catalogs | null): boolean {
  if (catalogs === null || tier < CARD_TIER.provider || usage.event_type === 'llm_tokens') return false;
  const provider = catalogProviderOf(card, catalogs, usage.provider);
  const entry = catalogs.speech.find(provider, usage.event_type, usage.model ?? null, usage.occurred_at);
  if (entry !== null && (entry.model !== undefined || tier === CARD_TIER.any)) return true;
  const model = usage.model ?? null;
  return (
    usage.event_type === 'stt_minutes' &&
    model !== null &&
    catalogs.llm.audioHourPrice(provider, model, usage.occurred_at) !== null
  );
}

function fromCard(
  described: Pick<PricedUsage, 'unit' | 'service'>,
  computed: ComputedCost,
  reportedTotal: string | null,
): PricedUsage {
  const components = computed.components.map((part) => ({
    dimension: part.dimension,
    quantity: toStoredDecimal(part.quantity),
    unit: part.unit,
    price: part.price.toFixed(),
    per: part.per.toFixed(),
    cost: toStoredDecimal(part.cost),
    rate_id: part.rate_id,
  }));
  // The event's cost is the sum of its stored parts, so that a view by part and a view by event agree to the last decimal.
  const cost = toStoredDecimal(Exact.sum(0, ...components.map((part) => part.cost)));
  return {
    unit: described.unit,
    service: described.service,
    quantity: toStoredDecimal(computed.quantity),
    cost,
    unit_cost: toStoredDecimal(computed.unit_cost),
    cost_source: 'computed',
    rate_id: computed.rate_ids.join(','),
    currency: computed.currency,
    reconcile: reportedTotal !== null && disagrees(new Exact(cost), new Exact(reportedTotal)),
    components,
    scope: computed.scope,
  };
}

function fromSender(usage: UsageToPrice): Pick<PricedUsage, 'quantity' | 'cost' | 'unit_cost' | 'cost_source'> {
  const quantity = new Exact(usage.quantity);
  const unitCost = usage.reported_unit_cost == null ? null : new Exact(usage.reported_unit_cost);
  if (usage.reported_total_cost != null) {
    const cost = new Exact(usage.reported_total_cost);
    const perUnit = unitCost ?? (quantity.greaterThan(0) ? cost.dividedBy(quantity) : new Exact(0));
    return {
      quantity: toStoredDecimal(quantity),
      cost: toStoredDecimal(cost),
      unit_cost: toStoredDecimal(perUnit),
      cost_source: 'reported',
    };
  }
  if (unitCost !== null) {
    return {
      quantity: toStoredDecimal(quantity),
      cost: toStoredDecimal(quantity.times(unitCost)),
      unit_cost: toStoredDecimal(unitCost),
      cost_source: 'reported',
    };
  }
  return { quantity: toStoredDecimal(quantity), cost: '0', unit_cost: '0', cost_source: 'unpriced' };
}

/** Compared with the stored (rounded) cost, so the flag agrees with what a reader sees. */
function disagrees(computed: Exact, reported: Exact): boolean {
  if (computed.isZero()) return !reported.isZero();
  return reported.minus(computed).abs().greaterThan(computed.abs().times(RECONCILE_TOLERANCE));
}
