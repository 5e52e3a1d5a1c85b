import { beforeAll, describe, expect, it } from 'vitest';
import type { RateCard } from '../../../schemas/rate-card.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { loadCatalogs, type Catalogs } from './catalogs.ts';
import { CARD_TIER, cardTierOf } from './find-rate.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from './load-rate-card.ts';
import { priceUsage, priceUsageExactly, type UsageToPrice } from './price-usage.ts';
import { makeCard, makeCatalogs, makeRate, makeUsage } from './pricing.fixtures.ts';

// The most specific price first: a tenant's entry, then an entry for the event's provider and model
// (the card's, then the catalog's), then the card's provider-wide entry, then the catalog's provider-wide
// speech price, then a card entry for any provider.

let card: RateCard;
let catalogs: Catalogs;
beforeAll(async () => {
  card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  catalogs = loadCatalogs();
});

const at = new Date('2026-11-24T12:00:00Z');
const gemini = (overrides: Partial<UsageToPrice> = {}) =>
  makeUsage({
    event_type: 'llm_tokens',
    provider: 'google',
    model: 'gemini-2.0-flash',
    occurred_at: at,
    quantity: '4000',
    input_tokens: '3000',
    output_tokens: '1000',
    ...overrides,
  });

/** Both paths (the scaled one and Exact) must agree wherever the scaled one applies. */
function priced(on: RateCard, usage: UsageToPrice, withCatalogs: Catalogs | null = catalogs) {
  const result = priceUsage(on, usage, withCatalogs);
  expect(priceUsageExactly(on, usage, withCatalogs)).toEqual(result);
  return result;
}

describe('the order of prices', () => {
  it("prices google gemini-2.0-flash at the catalog's price of that model, not the card's provider-wide gemini-2.5-flash rates", () => {
    const model = priced(card, gemini());
    expect(model).toMatchObject({
      scope: 'catalog',
      cost: '0.0007',
      rate_id: 'genai-prices@0.1.8:google:gemini-2.0-flash',
    });
    expect(model.components.map((part) => [part.dimension, part.quantity, part.price])).toEqual([
      ['input_tokens', '3000', '0.1'],
      ['output_tokens', '1000', '0.4'],
    ]);
    // What the card's provider-wide rates charged it before: 4.857 times its list price.
    const provider = priced(card, gemini({ model: null }));
    expect(provider).toMatchObject({
      scope: 'card',
      cost: '0.0034',
      rate_id: 'llm-google-input-2024-01,llm-google-output-2024-01',
    });
    expect(new Exact(provider.cost).dividedBy(model.cost).toDecimalPlaces(3).toFixed()).toBe('4.857');
    // A model the catalog does not know still takes the card's provider-wide price; so does a bare quantity.
    expect(priced(card, gemini({ model: 'gemini-no-such-model' }))).toMatchObject({ scope: 'card', cost: '0.0034' });
    expect(priced(card, gemini({ input_tokens: null, output_tokens: null, quantity: '1000' }))).toMatchObject({
      scope: 'card',
      rate_id: 'llm-google-blended-2024-01',
      cost: '0.00086',
    });
  });

  it("puts a tenant's entry first, even a provider-wide one, and a card entry for the model before the catalog's", () => {
    const tenant = makeCard([
      ...card.rates.filter((rate) => rate.user_id === undefined && rate.event_type === 'llm_tokens'),
      makeRate({
        id: 'tenant-google',
        event_type: 'llm_tokens',
        unit: 'token',
        provider: 'google',
        price: '0.5',
        price_per: '1000',
        user_id: 'user-1',
      }),
      makeRate({
        id: 'card-flash-in',
        event_type: 'llm_tokens',
        unit: 'token',
        provider: 'google',
        model: 'gemini-2.0-flash',
        pricing: 'input_tokens',
        price: '0.2',
        price_per: '1000000',
      }),
      makeRate({
        id: 'card-flash-out',
        event_type: 'llm_tokens',
        unit: 'token',
        provider: 'google',
        model: 'gemini-2.0-flash',
        pricing: 'output_tokens',
        price: '0.8',
        price_per: '1000000',
      }),
    ]);
    expect(priced(tenant, gemini())).toMatchObject({ scope: 'tenant', rate_id: 'tenant-google', cost: '2' });
    expect(priced(tenant, gemini({ user_id: 'user-2' }))).toMatchObject({
      scope: 'card',
      rate_id: 'card-flash-in,card-flash-out',
      cost: '0.0014',
    });
  });

  it("prices deepgram nova-3 at the speech catalog's nova-3 price, and deepgram without a model at the card's", () => {
    const minutes = { provider: 'deepgram', quantity: '10', occurred_at: at };
    expect(priced(card, makeUsage({ ...minutes, model: 'nova-3' }))).toMatchObject({
      scope: 'catalog',
      rate_id: 'catalog-deepgram-nova-3-2026-11',
      cost: '0.048',
    });
    expect(priced(card, makeUsage(minutes))).toMatchObject({ scope: 'card', rate_id: 'stt-deepgram-2024-01' });
    expect(priced(card, makeUsage({ ...minutes, model: 'nova-2' }))).toMatchObject({ scope: 'card' });
  });

  it("puts the card's provider-wide entry before the catalog's provider-wide price, and that before a card entry for any provider", () => {
    const speech = makeCatalogs([
      {
        id: 'cat-acme-wide',
        provider: 'acme',
        event_type: 'stt_minutes',
        unit: 'minute',
        price: '0.02',
        per: '1',
        effective_from: '2025-01-01T00:00:00Z',
      },
      {
        id: 'cat-acme-fast',
        provider: 'acme',
        model: 'fast',
        event_type: 'stt_minutes',
        unit: 'minute',
        price: '0.01',
        per: '1',
        effective_from: '2025-01-01T00:00:00Z',
      },
    ]);
    const any = makeRate({ id: 'any-stt', provider: '*', price: '0.05' });
    const wide = makeRate({ id: 'acme-stt', provider: 'acme', price: '0.03' });
    const usage = (model: string | null, provider = 'acme') => makeUsage({ provider, model, quantity: '2' });
    expect(priced(makeCard([any, wide]), usage('fast'), speech)).toMatchObject({ rate_id: 'cat-acme-fast' });
    expect(priced(makeCard([any, wide]), usage('slow'), speech)).toMatchObject({ rate_id: 'acme-stt' });
    expect(priced(makeCard([any]), usage('slow'), speech)).toMatchObject({ rate_id: 'cat-acme-wide', cost: '0.04' });
    expect(priced(makeCard([any]), usage('slow', 'other'), speech)).toMatchObject({ rate_id: 'any-stt', cost: '0.1' });
    // Without catalogs the card alone prices, as before.
    expect(priced(makeCard([any]), usage('fast'), null)).toMatchObject({ rate_id: 'any-stt' });
  });

  it('tells the tiers of card entries apart in that order', () => {
    expect(
      [
        makeRate({ user_id: 'u', provider: '*' }),
        makeRate({ model: 'nova-3' }),
        makeRate(),
        makeRate({ provider: '*', model: 'nova-3' }),
      ].map(cardTierOf),
    ).toEqual([CARD_TIER.tenant, CARD_TIER.model, CARD_TIER.provider, CARD_TIER.any]);
  });
});
