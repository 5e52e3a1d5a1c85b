import type { Rate, RateCard, RateCardFile, RateEntry } from '../../../schemas/rate-card.ts';
import { parseRateCard } from './load-rate-card.ts';
import type { Catalogs } from './catalogs.ts';
import { LlmCatalog } from './llm-catalog.ts';
import type { UsageToPrice } from './price-usage.ts';
import { SpeechCatalog, type SpeechEntry } from './speech-catalog.ts';

// What an entry prices is left out: makeRate names an event_type, makeServiceRate a service.
const deepgramMinute = {
  provider: 'deepgram',
  unit: 'minute',
  price: '0.0077',
  price_per: '1',
  pricing: 'quantity',
  effective_from: '2024-01-01T00:00:00Z',
} as const;

export function makeRate(overrides: Partial<Rate> = {}): Rate {
  return { id: 'stt-deepgram-2024-01', event_type: 'stt_minutes', ...deepgramMinute, ...overrides };
}

/** An entry written for every event type of a service (default: speech-to-text, by the minute). */
export function makeServiceRate(overrides: Partial<RateEntry> = {}): RateEntry {
  return { id: 'stt-any-2024-01', service: 'stt', ...deepgramMinute, ...overrides };
}

/** The card as written (not yet parsed), with the default services and aliases. */
export function makeCardJson(rates: readonly RateEntry[], overrides: Partial<RateCardFile> = {}): RateCardFile {
  return {
    version: 1,
    currency: 'USD',
    services: {
      stt_minutes: { service: 'stt', unit: 'minute' },
      llm_tokens: { service: 'llm', unit: 'token' },
      tts_characters: { service: 'tts', unit: 'character' },
    },
    provider_aliases: { gemini: 'google' },
    rates: [...rates],
    ...overrides,
  };
}

export function makeCard(rates: readonly RateEntry[], overrides: Partial<RateCardFile> = {}): RateCard {
  return parseRateCard(makeCardJson(rates, overrides));
}

export function makeUsage(overrides: Partial<UsageToPrice> = {}): UsageToPrice {
  return {
    event_type: 'stt_minutes',
    provider: 'deepgram',
    user_id: 'user-1',
    occurred_at: new Date('2025-06-01T12:00:00Z'),
    quantity: '1',
    ...overrides,
  };
}

/** Catalogs for tests: the real LLM catalog and a speech catalog of the given entries (source fields filled in). */
export function makeCatalogs(
  entries: readonly (Omit<SpeechEntry, 'source' | 'read_at' | 'checked'> & Partial<Pick<SpeechEntry, 'checked'>>)[],
): Catalogs {
  const speech = SpeechCatalog.parse({
    version: 1,
    currency: 'USD',
    entries: entries.map((entry) => ({
      source: 'https://example.com/pricing',
      read_at: '2026-11-24',
      checked: true,
      ...entry,
    })),
  });
  return { llm: new LlmCatalog(), speech, currency: 'USD' };
}
