import { beforeAll, describe, expect, it } from 'vitest';
import { rateCardSchema, type RateCard } from '../../../schemas/rate-card.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from './load-rate-card.ts';
import { priceUsage, type UsageToPrice } from './price-usage.ts';
import { TOKEN_KINDS } from './token-kinds.ts';
import { makeCard, makeCatalogs, makeRate, makeServiceRate, makeUsage } from './pricing.fixtures.ts';

let card: RateCard;
beforeAll(async () => {
  card = await loadRateCard(DEFAULT_RATE_CARD_URL);
});

describe('priceUsage with the default card', () => {
  it.each([
    ['deepgram', '0.0077', 'stt-deepgram-2024-01'],
    ['assemblyai', '0.0078', 'stt-assemblyai-2024-01'],
    ['elevenlabs', '0.0167', 'stt-elevenlabs-2024-01'],
  ])('prices one minute of %s speech-to-text at %s', (provider, cost, rateId) => {
    expect(priceUsage(card, makeUsage({ provider, quantity: '1' }))).toEqual({
      quantity: '1',
      cost,
      unit_cost: cost,
      unit: 'minute',
      service: 'stt',
      cost_source: 'computed',
      rate_id: rateId,
      currency: 'USD',
      reconcile: false,
      components: [
        { dimension: 'quantity', quantity: '1', unit: 'minute', price: cost, per: '1', cost, rate_id: rateId },
      ],
      scope: 'card',
    });
  });

  it('prices 60 minutes of each speech-to-text provider at its hourly equivalent', () => {
    const hourly = ['deepgram', 'assemblyai', 'elevenlabs'].map(
      (provider) => priceUsage(card, makeUsage({ provider, quantity: '60' })).cost,
    );
    expect(hourly).toEqual(['0.462', '0.468', '1.002']);
  });

  it('prices 1200 tokens at the blended rate as the old service recorded (0.001032)', () => {
    const priced = priceUsage(card, makeUsage({ event_type: 'llm_tokens', provider: 'google', quantity: '1200' }));
    expect(priced).toMatchObject({
      cost: '0.001032',
      unit_cost: '0.00000086',
      unit: 'token',
      service: 'llm',
      rate_id: 'llm-google-blended-2024-01',
    });
  });

  it('prices 900 input and 300 output tokens at their own rates: 0.00027 + 0.00075', () => {
    const priced = priceUsage(
      card,
      makeUsage({
        event_type: 'llm_tokens',
        provider: 'google',
        quantity: '1200',
        input_tokens: '900',
        output_tokens: '300',
      }),
    );
    expect(priced).toMatchObject({
      quantity: '1200',
      cost: '0.00102',
      unit_cost: '0.00000085',
      rate_id: 'llm-google-input-2024-01,llm-google-output-2024-01',
    });
  });

  it('prices one input token at 0.30 per 1M exactly, never in exponent form', () => {
    const priced = priceUsage(
      card,
      makeUsage({ event_type: 'llm_tokens', provider: 'google', quantity: '1', input_tokens: '1' }),
    );
    expect(priced).toMatchObject({
      quantity: '1',
      cost: '0.0000003',
      unit_cost: '0.0000003',
      rate_id: 'llm-google-input-2024-01',
    });
  });

  it('prices every token of 1200 at the blended rate when only 900 input tokens are counted', () => {
    const priced = priceUsage(
      card,
      makeUsage({ event_type: 'llm_tokens', provider: 'google', quantity: '1200', input_tokens: '900' }),
    );
    expect(priced).toMatchObject({ quantity: '1200', cost: '0.001032', rate_id: 'llm-google-blended-2024-01' });
  });

  it('prices the quantity at the blended rate when the token counts do not add up to it', () => {
    const priced = priceUsage(
      card,
      makeUsage({
        event_type: 'llm_tokens',
        provider: 'google',
        quantity: '2000',
        input_tokens: '900',
        output_tokens: '300',
      }),
    );
    expect(priced).toMatchObject({ quantity: '2000', cost: '0.00172', rate_id: 'llm-google-blended-2024-01' });
  });

  it('prices 480 text-to-speech characters at 0.0192', () => {
    const priced = priceUsage(card, makeUsage({ event_type: 'tts_characters', provider: 'resemble', quantity: '480' }));
    expect(priced).toMatchObject({
      cost: '0.0192',
      unit_cost: '0.00004',
      unit: 'character',
      service: 'tts',
      rate_id: 'tts-resemble-2024-01',
    });
  });

  it('prices the old gemini id at the google rate and keeps nothing of the alias in the result', () => {
    const priced = priceUsage(card, makeUsage({ event_type: 'llm_tokens', provider: 'Gemini', quantity: '1200' }));
    expect(priced).toMatchObject({ cost: '0.001032', rate_id: 'llm-google-blended-2024-01' });
  });

  it('prices zero usage at zero', () => {
    const priced = priceUsage(
      card,
      makeUsage({ event_type: 'llm_tokens', provider: 'google', quantity: '0', input_tokens: '0', output_tokens: '0' }),
    );
    expect(priced).toMatchObject({ quantity: '0', cost: '0', unit_cost: '0', cost_source: 'computed' });
  });
});

describe('priceUsage without a rate', () => {
  const unknown = makeUsage({ provider: 'whisper', quantity: '2' });

  it('keeps the reported total and derives the unit cost', () => {
    expect(priceUsage(card, { ...unknown, reported_total_cost: '0.05' })).toMatchObject({
      cost: '0.05',
      unit_cost: '0.025',
      cost_source: 'reported',
      rate_id: '',
      reconcile: false,
    });
  });

  it('multiplies the reported unit cost when no total is reported', () => {
    expect(priceUsage(card, { ...unknown, reported_unit_cost: '0.006' })).toMatchObject({
      cost: '0.012',
      unit_cost: '0.006',
      cost_source: 'reported',
    });
  });

  it('records zero and says unpriced when nothing is reported', () => {
    expect(priceUsage(card, unknown)).toEqual({
      quantity: '2',
      cost: '0',
      unit_cost: '0',
      unit: 'minute',
      service: 'stt',
      cost_source: 'unpriced',
      rate_id: '',
      currency: 'USD',
      reconcile: false,
      components: [],
      scope: null,
    });
  });

  it('falls back to the blended rate when a token side has no rate of its own', () => {
    const blendedOnly = makeCard([
      makeRate({
        id: 'blended',
        event_type: 'llm_tokens',
        unit: 'token',
        provider: 'google',
        price: '0.00086',
        price_per: '1000',
      }),
    ]);
    const priced = priceUsage(
      blendedOnly,
      makeUsage({
        event_type: 'llm_tokens',
        provider: 'google',
        quantity: '1200',
        input_tokens: '900',
        output_tokens: '300',
      }),
    );
    expect(priced).toMatchObject({ cost: '0.001032', rate_id: 'blended' });
  });
});

describe('priceUsage reconciliation', () => {
  const minute = makeUsage({ quantity: '100' }); // computed 0.77

  it.each([
    ['0.77', false],
    ['0.7777', false], // exactly 1% over
    ['0.7623', false], // exactly 1% under
    ['0.77771', true],
    ['0.76229', true],
  ])('flags a reported total of %s against 0.77: %s', (reported, flagged) => {
    expect(priceUsage(card, { ...minute, reported_total_cost: reported })).toMatchObject({
      cost: '0.77',
      cost_source: 'computed',
      reconcile: flagged,
    });
  });

  it('flags any reported total when the card says zero, and none when both are zero', () => {
    expect(priceUsage(card, { ...minute, quantity: '0', reported_total_cost: '0.01' }).reconcile).toBe(true);
    expect(priceUsage(card, { ...minute, quantity: '0', reported_total_cost: '0' }).reconcile).toBe(false);
  });
});

describe('priceUsage with a changing card', () => {
  it('prices events before a rate change at the old rate and after it at the new', () => {
    const changing = makeCard([
      makeRate({ id: 'old' }),
      makeRate({ id: 'new', price: '0.0059', effective_from: '2025-03-01T00:00:00Z' }),
    ]);
    const before = priceUsage(changing, makeUsage({ occurred_at: new Date('2025-02-15T00:00:00Z') }));
    const after = priceUsage(changing, makeUsage({ occurred_at: new Date('2025-03-15T00:00:00Z') }));
    expect([before.cost, before.rate_id, after.cost, after.rate_id]).toEqual(['0.0077', 'old', '0.0059', 'new']);
  });

  it('uses a per-user rate over the general one, in the card’s one currency', () => {
    const negotiated = makeCard([
      makeRate({ id: 'general' }),
      makeRate({ id: 'acme', user_id: 'acme', price: '0.005', currency: 'USD' }),
    ]);
    expect(priceUsage(negotiated, makeUsage({ user_id: 'acme', quantity: '10' }))).toMatchObject({
      cost: '0.05',
      rate_id: 'acme',
      currency: 'USD',
    });
    expect(priceUsage(negotiated, makeUsage({ user_id: 'other', quantity: '10' }))).toMatchObject({
      cost: '0.077',
      rate_id: 'general',
      currency: 'USD',
    });
  });

  it('rounds a cost that does not end within 18 decimals half to even', () => {
    const thirds = makeCard([makeRate({ id: 'third', price: '1', price_per: '3' })]);
    expect(priceUsage(thirds, makeUsage({ quantity: '2' }))).toMatchObject({
      cost: '0.666666666666666667',
      unit_cost: '0.333333333333333333',
    });
  });
});

describe('priceUsage with service entries', () => {
  it('prices each event type of the service and stores the entry id as the rate_id', () => {
    const services = {
      stt_minutes: { service: 'stt', unit: 'minute' },
      stt_stream_minutes: { service: 'stt', unit: 'minute' },
    };
    const card = makeCard([makeServiceRate({ id: 'stt-any', price: '0.006' })], { services });
    const priced = ['stt_minutes', 'stt_stream_minutes'].map((event_type) =>
      priceUsage(card, makeUsage({ event_type, quantity: '10' })),
    );
    expect(priced).toEqual(
      [0, 1].map(() => ({
        quantity: '10',
        cost: '0.06',
        unit_cost: '0.006',
        unit: 'minute',
        service: 'stt',
        cost_source: 'computed',
        rate_id: 'stt-any',
        currency: 'USD',
        reconcile: false,
        components: [
          {
            dimension: 'quantity',
            quantity: '10',
            unit: 'minute',
            price: '0.006',
            per: '1',
            cost: '0.06',
            rate_id: 'stt-any',
          },
        ],
        scope: 'card',
      })),
    );
  });

  it('prices a token split from service entries as from event_type entries', () => {
    const card = makeCard([
      makeServiceRate({
        id: 'llm-input',
        service: 'llm',
        unit: 'token',
        provider: 'google',
        price: '0.30',
        price_per: '1000000',
        pricing: 'input_tokens',
      }),
      makeRate({
        id: 'llm-output',
        event_type: 'llm_tokens',
        unit: 'token',
        provider: 'google',
        price: '2.50',
        price_per: '1000000',
        pricing: 'output_tokens',
      }),
    ]);
    const priced = priceUsage(
      card,
      makeUsage({
        event_type: 'llm_tokens',
        provider: 'google',
        quantity: '1200',
        input_tokens: '900',
        output_tokens: '300',
      }),
    );
    expect(priced).toMatchObject({ cost: '0.00102', rate_id: 'llm-input,llm-output' });
  });
});

describe('priceUsage with token kinds and the catalogs beneath the card', () => {
  const catalogs = makeCatalogs([
    {
      id: 'cat-cartesia-sonic',
      provider: 'cartesia',
      model: 'sonic',
      event_type: 'tts_characters',
      unit: 'character',
      price: '0.03',
      per: '1000',
      effective_from: '2025-01-01T00:00:00Z',
    },
    {
      id: 'cat-deepgram',
      provider: 'deepgram',
      event_type: 'stt_minutes',
      unit: 'minute',
      price: '0.0099',
      per: '1',
      effective_from: '2025-01-01T00:00:00Z',
    },
  ]);
  const llm = (overrides: Partial<UsageToPrice>) =>
    makeUsage({ event_type: 'llm_tokens', occurred_at: new Date('2026-11-24T12:00:00Z'), ...overrides });

  it('charges cached tokens as input where the card has no cached price, and at their own where it has', () => {
    const counts = { quantity: '1300', input_tokens: '1000', cached_input_tokens: '400', output_tokens: '300' };
    expect(priceUsage(card, llm({ provider: 'google', ...counts }))).toMatchObject({
      cost: '0.00105',
      rate_id: 'llm-google-input-2024-01,llm-google-output-2024-01',
      scope: 'card',
    });
    const cached = makeCard([
      makeRate({
        id: 'in',
        event_type: 'llm_tokens',
        unit: 'token',
        provider: 'google',
        price: '0.30',
        price_per: '1000000',
        pricing: 'input_tokens',
      }),
      makeRate({
        id: 'cached',
        event_type: 'llm_tokens',
        unit: 'token',
        provider: 'google',
        price: '0.075',
        price_per: '1000000',
        pricing: 'cached_input_tokens',
      }),
      makeRate({
        id: 'out',
        event_type: 'llm_tokens',
        unit: 'token',
        provider: 'google',
        price: '2.50',
        price_per: '1000000',
        pricing: 'output_tokens',
      }),
    ]);
    const priced = priceUsage(cached, llm({ provider: 'google', ...counts }));
    expect(priced.components.map((part) => [part.dimension, part.quantity, part.cost, part.rate_id])).toEqual([
      ['input_tokens', '600', '0.00018', 'in'],
      ['cached_input_tokens', '400', '0.00003', 'cached'],
      ['output_tokens', '300', '0.00075', 'out'],
    ]);
    expect(priced).toMatchObject({
      quantity: '1300',
      cost: '0.00096',
      rate_id: 'in,cached,out',
      cost_source: 'computed',
    });
  });

  it('prices an LLM the card does not know from the catalog, each kind at its rate, the cost the sum of the parts', () => {
    const priced = priceUsage(
      card,
      llm({
        provider: 'openai',
        model: 'gpt-4o-mini-2024-07-18',
        quantity: '1200',
        input_tokens: '1000',
        cached_input_tokens: '400',
        output_tokens: '200',
      }),
      catalogs,
    );
    expect(priced).toMatchObject({
      cost_source: 'computed',
      scope: 'catalog',
      cost: '0.00024',
      quantity: '1200',
      unit_cost: '0.0000002',
      rate_id: 'genai-prices@0.1.8:openai:gpt-4o-mini',
    });
    expect(priced.components.map((part) => [part.dimension, part.quantity, part.price, part.per, part.cost])).toEqual([
      ['input_tokens', '600', '0.15', '1000000', '0.00009'],
      ['cached_input_tokens', '400', '0.075', '1000000', '0.00003'],
      ['output_tokens', '200', '0.6', '1000000', '0.00012'],
    ]);
    // Without the catalogs (or a model, or token counts), the same event is unpriced as before.
    expect(
      priceUsage(
        card,
        llm({ provider: 'openai', model: 'gpt-4o-mini', quantity: '1200', input_tokens: '1000', output_tokens: '200' }),
      ).cost_source,
    ).toBe('unpriced');
    expect(
      priceUsage(
        card,
        llm({ provider: 'openai', quantity: '1200', input_tokens: '1000', output_tokens: '200' }),
        catalogs,
      ).cost_source,
    ).toBe('unpriced');
    expect(
      priceUsage(card, llm({ provider: 'openai', model: 'gpt-4o-mini', quantity: '1200' }), catalogs).cost_source,
    ).toBe('unpriced');
  });

  it('keeps the card over the catalog for the providers it prices, and prices speech from the catalog beneath', () => {
    expect(
      priceUsage(card, makeUsage({ provider: 'deepgram', model: 'nova-3', quantity: '2' }), catalogs),
    ).toMatchObject({ cost: '0.0154', scope: 'card', rate_id: 'stt-deepgram-2024-01' });
    expect(
      priceUsage(
        card,
        makeUsage({ event_type: 'tts_characters', provider: 'Cartesia', model: 'sonic-2', quantity: '1500' }),
        catalogs,
      ),
    ).toMatchObject({
      cost: '0.045',
      unit: 'character',
      service: 'tts',
      scope: 'catalog',
      rate_id: 'cat-cartesia-sonic',
      cost_source: 'computed',
    });
  });

  it('lists every token kind as a card pricing, so that the card can price each one', () => {
    expect(rateCardSchema.properties.rates.items.properties.pricing.enum).toEqual(['quantity', ...TOKEN_KINDS]);
  });
});
