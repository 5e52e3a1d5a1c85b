import { describe, expect, it } from 'vitest';
import { LISTED_LLM_PROVIDERS } from './llm-catalog.ts';
import { makeCard, makeCatalogs, makeRate } from './pricing.fixtures.ts';
import { listRates } from './rate-listing.ts';

const catalogs = makeCatalogs([
  {
    id: 'cartesia-old',
    provider: 'cartesia',
    model: 'sonic',
    event_type: 'tts_characters',
    unit: 'character',
    price: '0.05',
    per: '1000',
    effective_from: '2025-01-01T00:00:00Z',
  },
  {
    id: 'cartesia-new',
    provider: 'cartesia',
    model: 'sonic',
    event_type: 'tts_characters',
    unit: 'character',
    price: '0.03',
    per: '1000',
    effective_from: '2026-01-01T00:00:00Z',
    checked: false,
  },
  {
    id: 'speechmatics',
    provider: 'speechmatics',
    event_type: 'stt_minutes',
    unit: 'hour',
    price: '0.24',
    per: '1',
    effective_from: '2025-01-01T00:00:00Z',
  },
]);
const card = makeCard([
  makeRate({ id: 'dg-old', price: '0.0090', effective_from: '2024-01-01T00:00:00Z' }),
  makeRate({ id: 'dg-new', price: '0.0077', effective_from: '2026-01-01T00:00:00Z' }),
  makeRate({ id: 'dg-acme', price: '0.0050', user_id: 'acme', effective_from: '2025-01-01T00:00:00Z' }),
]);

describe('listRates', () => {
  it('lists the entry of each key in force at `at`, with when the next one replaces it', () => {
    const at2025 = listRates(card, catalogs, { provider: 'deepgram', at: new Date('2025-06-01T00:00:00Z') });
    expect(
      at2025.map((entry) => [entry.id, entry.scope, entry.price, entry.effective_from, entry.effective_to]),
    ).toEqual([['dg-old', 'card', '0.0090', '2024-01-01T00:00:00Z', '2026-01-01T00:00:00Z']]);
    const now = listRates(card, catalogs, { provider: 'Deepgram', at: new Date('2026-11-24T00:00:00Z') });
    expect(now.map((entry) => [entry.id, entry.effective_to])).toEqual([['dg-new', null]]);
  });

  it("lists a tenant's own entries only when asked for by its user_id", () => {
    const acme = listRates(card, catalogs, {
      provider: 'deepgram',
      user_id: 'acme',
      at: new Date('2026-11-24T00:00:00Z'),
    });
    expect(acme.map((entry) => [entry.id, entry.scope, entry.user_id])).toEqual([
      ['dg-new', 'card', null],
      ['dg-acme', 'tenant', 'acme'],
    ]);
    expect(
      listRates(card, catalogs, { provider: 'deepgram', user_id: 'other', at: new Date() }).map((entry) => entry.id),
    ).toEqual(['dg-new']);
  });

  it('lists the speech catalog with its source, saying when a price could not be checked', () => {
    const tts = listRates(card, catalogs, { service: 'tts', at: new Date('2026-11-24T00:00:00Z') });
    expect(tts).toEqual([
      {
        id: 'cartesia-new',
        scope: 'catalog',
        user_id: null,
        provider: 'cartesia',
        model: 'sonic',
        service: 'tts',
        event_type: 'tts_characters',
        dimension: 'quantity',
        unit: 'character',
        price: '0.03',
        per: '1000',
        currency: 'USD',
        effective_from: '2026-01-01T00:00:00Z',
        effective_to: null,
        source: 'https://example.com/pricing (read 2026-11-24, not checked on the provider’s own page)',
      },
    ]);
    expect(
      listRates(card, catalogs, { provider: 'cartesia', model: 'sonic-2', at: new Date('2025-06-01T00:00:00Z') }).map(
        (entry) => [entry.id, entry.effective_to],
      ),
    ).toEqual([['cartesia-old', '2026-01-01T00:00:00Z']]);
  });

  it("lists an LLM's catalog price of each token kind it has, per million tokens", () => {
    const mini = listRates(card, catalogs, {
      provider: 'openai',
      model: 'gpt-4o-mini-2024-07-18',
      at: new Date('2026-11-24T00:00:00Z'),
    });
    expect(mini.map((entry) => [entry.model, entry.dimension, entry.price, entry.per, entry.unit])).toEqual([
      ['gpt-4o-mini', 'input_tokens', '0.15', '1000000', 'token'],
      ['gpt-4o-mini', 'cached_input_tokens', '0.075', '1000000', 'token'],
      ['gpt-4o-mini', 'output_tokens', '0.6', '1000000', 'token'],
    ]);
    const everything = listRates(card, catalogs, { service: 'llm', at: new Date('2026-11-24T00:00:00Z') });
    expect(new Set(everything.map((entry) => entry.provider))).toEqual(new Set(LISTED_LLM_PROVIDERS));
    expect(new Set(everything.map((entry) => entry.id)).size).toBe(everything.length);
    expect(listRates(card, catalogs, { service: 'stt', provider: 'openai', at: new Date() })).toEqual([]);
  });
});

describe('listRates of dated catalog prices', () => {
  it('lists the start and end of a dated LLM price as date-times', () => {
    const dated = listRates(card, catalogs, { service: 'llm', at: new Date('2026-11-24T00:00:00Z') }).filter(
      (entry) => entry.effective_from !== null || entry.effective_to !== null,
    );
    expect(dated.length).toBeGreaterThan(0);
    for (const entry of dated) {
      for (const instant of [entry.effective_from, entry.effective_to])
        if (instant !== null) expect(instant).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    }
  });
});
