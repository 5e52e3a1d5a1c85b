import type { Rate, RateCard, RatePricing } from '../../../schemas/rate-card.ts';
import { resolveProvider } from './provider-names.ts';
import { tenantIndexOf } from './tenant-rate-index.ts';

export interface RateQuery {
  readonly event_type: string;
  readonly provider: string;
  readonly model?: string | null;
  readonly user_id: string;
  readonly at: Date;
  readonly pricing: RatePricing;
}

/** One event's query before its pricing is chosen: the pricer asks it once per pricing. */
export type LookUp = Omit<RateQuery, 'pricing'>;

/**
 * The rate in force at `at` for one usage, or null. The most specific entry wins: the user's own
 * (provider and model, provider, then "*"), then provider and model, provider, and "*"; among
 * entries of the same key, the latest effective_from not after `at`, so a price change applies
 * from its date and never to earlier events. `card` is a parsed card (names lower-cased, service
 * entries resolved to their event types).
 */
export function findRate(card: RateCard, query: RateQuery): Rate | null {
  const at = query.at.getTime();
  if (Number.isNaN(at)) return null;
  const own = ratesOf(card, query.event_type, query.pricing, query.user_id);
  const tenants = tenantIndexOf(card);
  // The card's own entries first, then the tenant's: the order in which two equal entries have always been met.
  const tenant = tenants === null ? EMPTY : tenants.candidates(query.user_id, query.event_type, query.pricing, at);
  if (own.length === 0 && tenant.length === 0) return null;
  const wanted = {
    provider: resolveProvider(card.provider_aliases, query.provider),
    model: query.model?.toLowerCase() ?? null,
    user_id: query.user_id,
  };
  let best: { rate: Rate; rank: number; from: number } | null = null;
  for (const candidates of [own, tenant])
    for (const rate of candidates) {
      const rank = specificity(rate, wanted);
      const { from, to } = timesOf(rate);
      if (rank < 0 || from > at || to <= at) continue;
      if (best === null || rank > best.rank || (rank === best.rank && from > best.from)) best = { rate, rank, from };
    }
  return best?.rate ?? null;
}

/**
 * -1 when the entry does not apply; otherwise higher is more specific (user, then provider, then
 * model, then an entry written for the event type over one written for its whole service). The last
 * is the lowest bit, so it only parts entries of the same user, provider and model: there, as with
 * the others, the more specific entry wins even when the other is newer, which makes an event_type
 * entry an exception to a service entry rather than a price change of it.
 */
function specificity(rate: Rate, wanted: { provider: string; model: string | null; user_id: string }): number {
  if (rate.user_id !== undefined && rate.user_id !== wanted.user_id) return -1;
  if (rate.provider !== '*' && rate.provider !== wanted.provider) return -1;
  if (rate.model !== undefined && rate.model !== wanted.model) return -1;
  return (
    (rate.user_id === undefined ? 0 : 8) +
    (rate.provider === '*' ? 0 : 4) +
    (rate.model === undefined ? 0 : 2) +
    (rate.service === undefined ? 1 : 0)
  );
}

/**
 * How specific a card entry is, in the order prices apply (compute-cost.ts puts the catalogs between
 * these): a tenant's own entry, one for a provider and model, one for a provider, one for any provider.
 * Monotone in specificity(): the entry findRate chooses is of the most specific tier any applicable
 * entry is of.
 */
export type CardTier = 0 | 1 | 2 | 3;
export const CARD_TIER = { tenant: 0, model: 1, provider: 2, any: 3 } as const satisfies Record<string, CardTier>;

export function cardTierOf(rate: Rate): CardTier {
  if (rate.user_id !== undefined) return CARD_TIER.tenant;
  if (rate.provider === '*') return CARD_TIER.any;
  return rate.model === undefined ? CARD_TIER.provider : CARD_TIER.model;
}

const EMPTY: readonly Rate[] = Object.freeze([]);

/** A card's rates of one event type and pricing: those for every user, and for each user with its own, the general ones and its own. */
interface Indexed {
  readonly shared: Rate[];
  readonly byUser: Map<string, Rate[]>;
}

const indexes = new WeakMap<RateCard, Map<string, Indexed>>();

/**
 * The card's rates of one event type and pricing that can apply to the user (the general ones, then the
 * user's own, each in card order): an index
 * built once per card (a card is frozen), so a lookup walks the few entries that can apply rather than
 * the whole card, and never another user's.
 */
function ratesOf(card: RateCard, eventType: string, pricing: RatePricing, userId: string): readonly Rate[] {
  let index = indexes.get(card);
  if (index === undefined) {
    index = new Map();
    for (const rate of card.rates) {
      const key = `${rate.event_type}\u0000${rate.pricing}`;
      let indexed = index.get(key);
      if (indexed === undefined) index.set(key, (indexed = { shared: [], byUser: new Map() }));
      if (rate.user_id === undefined) indexed.shared.push(rate);
      else {
        const own = indexed.byUser.get(rate.user_id);
        if (own === undefined) indexed.byUser.set(rate.user_id, [rate]);
        else own.push(rate);
      }
    }
    // A user's rates follow the general ones: only rates of one rank can tie, and those keep their order.
    for (const indexed of index.values())
      for (const [user, own] of indexed.byUser) indexed.byUser.set(user, [...indexed.shared, ...own]);
    indexes.set(card, index);
  }
  const indexed = index.get(`${eventType}\u0000${pricing}`);
  if (indexed === undefined) return EMPTY;
  return indexed.byUser.get(userId) ?? indexed.shared;
}

const times = new WeakMap<Rate, { readonly from: number; readonly to: number }>();

/** When a rate applies, as epoch milliseconds, parsed once per rate (a card's rates are frozen). */
function timesOf(rate: Rate): { readonly from: number; readonly to: number } {
  let parsed = times.get(rate);
  if (parsed === undefined) {
    parsed = {
      from: Date.parse(rate.effective_from),
      to: rate.effective_to === undefined ? Number.POSITIVE_INFINITY : Date.parse(rate.effective_to),
    };
    times.set(rate, parsed);
  }
  return parsed;
}
