import type { rateEntrySchema } from '../../../schemas/http/rates.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import type { Rate, RateCard } from '../../../schemas/rate-card.ts';
import type { Catalogs } from './catalogs.ts';
import {
  LISTED_LLM_PROVIDERS,
  LLM_CATALOG_VERSION,
  llmPriceKey,
  llmTimePrice,
  SESSION_DIMENSION,
} from './llm-catalog.ts';
import { resolveProvider } from './provider-names.ts';
import { tenantIndexOf } from './tenant-rate-index.ts';
import type { SpeechEntry } from './speech-catalog.ts';
import { TOKEN_KINDS } from './token-kinds.ts';

/** One price as GET /api/rates shows it: price is for `per` units of `unit`, of `dimension`. */
export type RateListing = WireOf<typeof rateEntrySchema>;

export interface RateFilter {
  readonly provider?: string;
  readonly model?: string;
  readonly service?: string;
  readonly user_id?: string;
  readonly at: Date;
}

const SPEECH_SERVICES: Readonly<Record<SpeechEntry['event_type'], string>> = {
  stt_minutes: 'stt',
  tts_characters: 'tts',
};

/**
 * The entries in force at `at` that match the filter: the card's (a tenant's own only when asked for
 * by user_id), then the catalog's. An entry's effective_to is when the next entry of the same key
 * replaces it.
 */
export function listRates(card: RateCard, catalogs: Catalogs, filter: RateFilter): RateListing[] {
  return [
    ...cardListings(card, filter),
    ...speechListings(card, catalogs, filter),
    ...llmListings(card, catalogs, filter),
  ];
}

function cardListings(card: RateCard, filter: RateFilter): RateListing[] {
  const provider = filter.provider === undefined ? undefined : resolveProvider(card.provider_aliases, filter.provider);
  const model = filter.model?.toLowerCase();
  const keyOf = (rate: Rate) =>
    [
      rate.event_type,
      rate.provider,
      rate.model ?? '',
      rate.user_id ?? '',
      rate.pricing,
      rate.service === undefined ? 'e' : 's',
    ].join('\u0000');
  const seen = new Set<string>();
  // A tenant's entries come from the tenant index by its user_id only: another tenant's are never walked.
  const tenants = tenantIndexOf(card);
  const rates =
    tenants === null || filter.user_id === undefined ? card.rates : [...card.rates, ...tenants.ratesOf(filter.user_id)];
  return inForce(rates, keyOf, (rate) => rate.effective_from, filter.at)
    .filter(({ entry: rate }) => {
      const service = card.services[rate.event_type]?.service ?? '';
      return (
        (provider === undefined || rate.provider === provider || rate.provider === '*') &&
        (model === undefined || rate.model === undefined || rate.model === model) &&
        (filter.service === undefined || service === filter.service) &&
        (rate.user_id === undefined || rate.user_id === filter.user_id)
      );
    })
    .filter(({ entry: rate }) => {
      // A service entry is one rate per event type, all with its id: listed once per event type.
      const key = `${rate.id}\u0000${rate.event_type}\u0000${rate.pricing}`;
      if (seen.has(key)) return false;
      seen.add(key);
      return true;
    })
    .map(({ entry: rate, until }) => ({
      id: rate.id,
      scope: rate.user_id === undefined ? 'card' : 'tenant',
      user_id: rate.user_id ?? null,
      provider: rate.provider,
      model: rate.model ?? null,
      service: card.services[rate.event_type]?.service ?? '',
      event_type: rate.event_type,
      dimension: rate.pricing,
      unit: rate.unit,
      price: rate.price,
      per: rate.price_per,
      currency: rate.currency ?? card.currency,
      effective_from: rate.effective_from,
      effective_to: until,
      source: rate.note ?? 'rate card',
    }));
}

function speechListings(card: RateCard, catalogs: Catalogs, filter: RateFilter): RateListing[] {
  const provider = filter.provider === undefined ? undefined : resolveProvider(card.provider_aliases, filter.provider);
  const model = filter.model?.toLowerCase();
  const keyOf = (entry: SpeechEntry) => [entry.provider, entry.model ?? '', entry.event_type].join('\u0000');
  return inForce(catalogs.speech.entries(), keyOf, (entry) => entry.effective_from, filter.at)
    .filter(
      ({ entry }) =>
        (provider === undefined || entry.provider === provider) &&
        (model === undefined ||
          entry.model === undefined ||
          entry.model === model ||
          model.startsWith(`${entry.model}-`)),
    )
    .filter(({ entry }) => filter.service === undefined || SPEECH_SERVICES[entry.event_type] === filter.service)
    .map(({ entry, until }) => ({
      id: entry.id,
      scope: 'catalog',
      user_id: null,
      provider: entry.provider,
      model: entry.model ?? null,
      service: SPEECH_SERVICES[entry.event_type],
      event_type: entry.event_type,
      dimension: 'quantity',
      unit: entry.unit,
      price: entry.price,
      per: entry.per,
      currency: catalogs.currency,
      effective_from: entry.effective_from,
      effective_to: until,
      source: `${entry.source} (read ${entry.read_at}${entry.checked ? '' : ', not checked on the provider’s own page'})`,
    }));
}

function llmListings(card: RateCard, catalogs: Catalogs, filter: RateFilter): RateListing[] {
  if (filter.service !== undefined && filter.service !== 'llm') return [];
  const providers =
    filter.provider === undefined ? LISTED_LLM_PROVIDERS : [resolveProvider(card.provider_aliases, filter.provider)];
  return providers.flatMap((provider) => {
    const models =
      filter.model === undefined
        ? catalogs.llm.models(provider)
        : [catalogs.llm.resolve(provider, filter.model.toLowerCase())?.model].flatMap((found) =>
            found === undefined ? [] : [found],
          );
    return models.flatMap((model) => {
      const { prices, since, until } = catalogs.llm.pricesAt(model, filter.at);
      const providerId = catalogs.llm.providerId(provider);
      const listing = (
        dimension: RateListing['dimension'],
        unit: string,
        price: string,
        per: string,
        note = '',
      ): RateListing => ({
        id: `genai-prices@${LLM_CATALOG_VERSION}:${providerId}:${model.id}${since === null ? '' : `@${since}`}:${dimension}`,
        scope: 'catalog',
        user_id: null,
        provider: providerId,
        model: model.id,
        service: 'llm',
        event_type: 'llm_tokens',
        dimension,
        unit,
        price,
        per,
        currency: catalogs.currency,
        // The package writes start dates as dates (2026-07-30): listed as the instant they begin, UTC.
        effective_from: since === null ? null : new Date(since).toISOString(),
        effective_to: until === null ? null : new Date(until).toISOString(),
        source: `@pydantic/genai-prices ${LLM_CATALOG_VERSION}${note}`,
      });
      const tokens = TOKEN_KINDS.flatMap((kind) => {
        const price = llmPriceKey(prices, kind);
        if (price === null) return [];
        const note = price.tiered ? ' (tiered: a higher price past some prompt sizes; the quote applies it)' : '';
        return [listing(kind, 'token', price.base, '1000000', note)];
      });
      // A realtime model billed by connected time (xAI's voice agent): its price per hour of it.
      const time = llmTimePrice(prices);
      return time === null
        ? tokens
        : [...tokens, listing(SESSION_DIMENSION, 'second', time, '3600', ' (per hour of connected time)')];
    });
  });
}

/** The entries of each key in force at `at` (the latest effective_from not after it), with when the next one starts. */
function inForce<T>(
  entries: readonly T[],
  keyOf: (entry: T) => string,
  fromOf: (entry: T) => string,
  at: Date,
): { entry: T; until: string | null }[] {
  const byKey = new Map<string, T[]>();
  for (const entry of entries) byKey.set(keyOf(entry), [...(byKey.get(keyOf(entry)) ?? []), entry]);
  const chosen: { entry: T; until: string | null }[] = [];
  for (const group of byKey.values()) {
    const sorted = [...group].sort((a, b) => Date.parse(fromOf(a)) - Date.parse(fromOf(b)));
    const index = sorted.filter((entry) => Date.parse(fromOf(entry)) <= at.getTime()).length - 1;
    if (index >= 0)
      chosen.push({ entry: sorted[index]!, until: index + 1 < sorted.length ? fromOf(sorted[index + 1]!) : null });
  }
  return chosen;
}
