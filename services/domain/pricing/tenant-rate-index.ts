import type { Rate, RateCard, RateEntry, RatePricing } from '../../../schemas/rate-card.ts';
import { listEntryEventTypes } from './entry-event-types.ts';
import { resolveProvider } from './provider-names.ts';

/** A tenant entry as the index takes it: the card's fields, and the version that orders its changes. */
export interface VersionedEntry {
  readonly entry: RateEntry;
  readonly version: number;
}

interface Held {
  readonly version: number;
  readonly rates: readonly Rate[];
  readonly toMs: number;
}

/** One tenant's entries, and its lookup lists built from them when first needed after a change. */
interface Bucket {
  readonly held: Map<string, Held>;
  /** Per event type and pricing, the entries not ended when built, in id order; null: to build. */
  live: Map<string, Rate[]> | null;
  /** The ended ones, latest end first: consulted only by a usage that happened before an end. */
  ended: Rate[];
  /** When the next live entry ends, and the lists are built again. */
  nextEndMs: number;
  /** Lookups of this tenant's entries: what shows that pricing another tenant never reads them. */
  lookups: number;
}

const EMPTY: readonly Rate[] = Object.freeze([]);

/**
 * The tenants' own entries, by tenant: pricing one tenant's usage reads that tenant's entries and no
 * other's, so one tenant's thousands of entries cost nothing to another. A change rebuilds only its
 * tenant's lists, and only when that tenant is next priced. An entry past its effective_to leaves the
 * live lists, so a tenant's ended entries cost nothing to its usage of today either: they are read only
 * for usage that happened before they ended (a late event is priced as it was when it happened).
 */
export class TenantRateIndex {
  private readonly tenants = new Map<string, Bucket>();

  constructor(
    private readonly card: RateCard,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes each entry unless a version as high of it is held already (a change read twice is a no-op). */
  apply(entries: Iterable<VersionedEntry>): void {
    for (const { entry, version } of entries) {
      const user = entry.user_id;
      if (user === undefined) continue;
      let bucket = this.tenants.get(user);
      if (bucket === undefined) {
        bucket = { held: new Map(), live: null, ended: [], nextEndMs: Number.POSITIVE_INFINITY, lookups: 0 };
        this.tenants.set(user, bucket);
      }
      if ((bucket.held.get(entry.id)?.version ?? 0) >= version) continue;
      const toMs = entry.effective_to === undefined ? Number.POSITIVE_INFINITY : Date.parse(entry.effective_to);
      bucket.held.set(entry.id, { version, rates: resolveEntry(this.card, entry), toMs });
      bucket.live = null;
    }
  }

  /** The version held of an entry, 0 for none. */
  versionOf(userId: string, id: string): number {
    return this.tenants.get(userId)?.held.get(id)?.version ?? 0;
  }

  /**
   * The tenant's entries that can price a usage of this event type and pricing at `atMs`: the live
   * ones, and an ended one only when the usage happened before its end. In id order, as the card's
   * tenant entries have always been walked (it decides between two entries equal in every other way).
   */
  candidates(userId: string, eventType: string, pricing: RatePricing, atMs: number): readonly Rate[] {
    const bucket = this.tenants.get(userId);
    if (bucket === undefined) return EMPTY;
    bucket.lookups += 1;
    const live = this.liveOf(bucket).get(`${eventType}\u0000${pricing}`) ?? EMPTY;
    let before: Rate[] | null = null;
    for (const rate of bucket.ended) {
      if (Date.parse(rate.effective_to!) <= atMs) break;
      if (rate.event_type === eventType && rate.pricing === pricing) (before ??= []).push(rate);
    }
    return before === null ? live : [...live, ...before].sort(byId);
  }

  /** Every entry of the tenant, ended ones too, in id order: what the rates API lists. */
  ratesOf(userId: string): Rate[] {
    const bucket = this.tenants.get(userId);
    if (bucket === undefined) return [];
    return [...bucket.held.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .flatMap(([, held]) => held.rates);
  }

  /** The tenant's entries not ended at `nowMs` (one that ends later counts until it ends). */
  countLive(userId: string, nowMs: number): number {
    let count = 0;
    for (const held of this.tenants.get(userId)?.held.values() ?? []) if (held.toMs > nowMs) count += 1;
    return count;
  }

  /** How often a tenant's entries were looked up to price or quote. */
  lookupsOf(userId: string): number {
    return this.tenants.get(userId)?.lookups ?? 0;
  }

  private liveOf(bucket: Bucket): Map<string, Rate[]> {
    const nowMs = this.now();
    if (bucket.live !== null && nowMs < bucket.nextEndMs) return bucket.live;
    const live = new Map<string, Rate[]>();
    const ended: { rate: Rate; toMs: number }[] = [];
    let nextEndMs = Number.POSITIVE_INFINITY;
    const ids = [...bucket.held.keys()].sort();
    for (const id of ids) {
      const held = bucket.held.get(id)!;
      if (held.toMs <= nowMs) {
        for (const rate of held.rates) ended.push({ rate, toMs: held.toMs });
        continue;
      }
      nextEndMs = Math.min(nextEndMs, held.toMs);
      for (const rate of held.rates) {
        const key = `${rate.event_type}\u0000${rate.pricing}`;
        const list = live.get(key);
        if (list === undefined) live.set(key, [rate]);
        else list.push(rate);
      }
    }
    bucket.live = live;
    bucket.ended = ended.sort((a, b) => b.toMs - a.toMs).map(({ rate }) => rate);
    bucket.nextEndMs = nextEndMs;
    return live;
  }
}

function byId(a: Rate, b: Rate): number {
  return a.id < b.id ? -1 : a.id > b.id ? 1 : 0;
}

/**
 * A tenant entry resolved as the card's own are: one rate per event type of a service entry, provider
 * aliases resolved, model lower-cased. The entries were checked when they were created (POST /api/rates).
 */
export function resolveEntry(card: RateCard, entry: RateEntry): Rate[] {
  // An entry in another currency was refused at creation; one stored before that check prices nothing,
  // so that the event it would have priced is priced in the card's currency, not added into it.
  if (entry.currency !== undefined && entry.currency !== card.currency) return [];
  return listEntryEventTypes(card.services, entry).map((event_type) =>
    Object.freeze({
      ...entry,
      event_type,
      provider: resolveProvider(card.provider_aliases, entry.provider),
      ...(entry.model === undefined ? {} : { model: entry.model.toLowerCase() }),
    }),
  );
}

const indexes = new WeakMap<RateCard, TenantRateIndex>();

/** The card whose lookups also read the tenants' entries from `index`: one object for the index's life. */
export function cardWithTenantIndex(card: RateCard, index: TenantRateIndex): RateCard {
  const withIndex: RateCard = { ...card };
  indexes.set(withIndex, index);
  return withIndex;
}

/** The tenant entries of a card made by cardWithTenantIndex; null for any other card. */
export function tenantIndexOf(card: RateCard): TenantRateIndex | null {
  return indexes.get(card) ?? null;
}
