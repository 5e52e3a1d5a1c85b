import { describe, expect, it } from 'vitest';
import { findRate, type RateQuery } from './find-rate.ts';
import { makeCard, makeRate, makeServiceRate } from './pricing.fixtures.ts';

function makeQuery(overrides: Partial<RateQuery> = {}): RateQuery {
  return {
    event_type: 'stt_minutes',
    provider: 'deepgram',
    user_id: 'user-1',
    at: new Date('2025-06-01T00:00:00Z'),
    pricing: 'quantity',
    ...overrides,
  };
}

const llm = { event_type: 'llm_tokens', unit: 'token' } as const;

describe('findRate', () => {
  it('prices an alias at the rate of the provider it names', () => {
    const card = makeCard([makeRate({ ...llm, id: 'google', provider: 'google' })]);
    expect(findRate(card, makeQuery({ event_type: 'llm_tokens', provider: 'gemini' }))?.id).toBe('google');
  });

  it('matches provider and model without regard to case', () => {
    const card = makeCard([makeRate({ id: 'plain' }), makeRate({ id: 'nova', provider: 'DeepGram', model: 'Nova-3' })]);
    expect(findRate(card, makeQuery({ provider: 'DEEPGRAM', model: 'NOVA-3' }))?.id).toBe('nova');
    expect(findRate(card, makeQuery({ provider: 'Deepgram', model: 'nova-2' }))?.id).toBe('plain');
  });

  it('prefers the user own rate over every general one', () => {
    const card = makeCard([
      makeRate({ id: 'general-model', model: 'nova-3' }),
      makeRate({ id: 'mine-any-provider', provider: '*', user_id: 'user-1' }),
      makeRate({ id: 'someone-else', user_id: 'user-2' }),
    ]);
    expect(findRate(card, makeQuery({ model: 'nova-3' }))?.id).toBe('mine-any-provider');
    expect(findRate(card, makeQuery({ model: 'nova-3', user_id: 'user-3' }))?.id).toBe('general-model');
  });

  it('follows the lookup order: user provider+model, user provider, user "*", provider+model, provider, "*"', () => {
    const order = [
      makeRate({ id: 'user-model', user_id: 'user-1', model: 'nova-3' }),
      makeRate({ id: 'user-provider', user_id: 'user-1' }),
      makeRate({ id: 'user-any', user_id: 'user-1', provider: '*' }),
      makeRate({ id: 'model', model: 'nova-3' }),
      makeRate({ id: 'provider' }),
      makeRate({ id: 'any', provider: '*' }),
    ];
    // Drop the winner each round; the next in the order must win.
    for (let first = 0; first < order.length; first += 1) {
      const card = makeCard(order.slice(first));
      expect(findRate(card, makeQuery({ model: 'nova-3' }))?.id).toBe(order[first]?.id);
    }
  });

  it('applies a rate change from its date on, never before', () => {
    const card = makeCard([
      makeRate({ id: 'old' }),
      makeRate({ id: 'new', price: '0.0059', effective_from: '2025-03-01T00:00:00Z' }),
    ]);
    expect(findRate(card, makeQuery({ at: new Date('2025-02-28T23:59:59.999Z') }))?.id).toBe('old');
    expect(findRate(card, makeQuery({ at: new Date('2025-03-01T00:00:00Z') }))?.id).toBe('new');
  });

  it('keeps the more specific entry even when a general one is newer', () => {
    const card = makeCard([
      makeRate({ id: 'mine', user_id: 'user-1' }),
      makeRate({ id: 'general-new', effective_from: '2025-03-01T00:00:00Z' }),
    ]);
    expect(findRate(card, makeQuery())?.id).toBe('mine');
  });

  it('finds nothing before the first entry, for an unknown provider, or for another pricing', () => {
    const card = makeCard([makeRate()]);
    expect(findRate(card, makeQuery({ at: new Date('2023-12-31T23:59:59Z') }))).toBeNull();
    expect(findRate(card, makeQuery({ provider: 'whisper' }))).toBeNull();
    expect(findRate(card, makeQuery({ pricing: 'input_tokens' }))).toBeNull();
    expect(findRate(card, makeQuery({ at: new Date('not a date') }))).toBeNull();
  });
});

describe('findRate with service entries', () => {
  const services = {
    stt_minutes: { service: 'stt', unit: 'minute' },
    stt_stream_minutes: { service: 'stt', unit: 'minute' },
    llm_tokens: { service: 'llm', unit: 'token' },
  };

  it('prices every event type of the service, and no other, with a service entry', () => {
    const card = makeCard([makeServiceRate({ id: 'stt-any' })], { services });
    expect(findRate(card, makeQuery({ event_type: 'stt_minutes' }))?.id).toBe('stt-any');
    expect(findRate(card, makeQuery({ event_type: 'stt_stream_minutes' }))?.id).toBe('stt-any');
    expect(findRate(card, makeQuery({ event_type: 'llm_tokens' }))).toBeNull();
  });

  it('prefers an event_type entry to a service entry of the same user, provider and model, even a newer one', () => {
    const card = makeCard(
      [makeRate({ id: 'stt-one' }), makeServiceRate({ id: 'stt-any-new', effective_from: '2025-03-01T00:00:00Z' })],
      { services },
    );
    expect(findRate(card, makeQuery({ event_type: 'stt_minutes' }))?.id).toBe('stt-one');
    expect(findRate(card, makeQuery({ event_type: 'stt_stream_minutes' }))?.id).toBe('stt-any-new');
  });

  it('keeps the lookup order across both forms, the event_type entry first within each step', () => {
    const steps = [
      { id: 'user-model', user_id: 'user-1', model: 'nova-3' },
      { id: 'user-provider', user_id: 'user-1' },
      { id: 'user-any', user_id: 'user-1', provider: '*' },
      { id: 'model', model: 'nova-3' },
      { id: 'provider' },
      { id: 'any', provider: '*' },
    ];
    const order = steps.flatMap(({ id, ...key }) => [
      makeRate({ ...key, id: `${id}-type` }),
      makeServiceRate({ ...key, id: `${id}-service` }),
    ]);
    // Drop the winner each round; the next in the order must win. The card lists them in reverse,
    // so that the order of entries in the file is not what decides between the two forms.
    for (let first = 0; first < order.length; first += 1) {
      const card = makeCard(order.slice(first).reverse(), { services });
      expect(findRate(card, makeQuery({ model: 'nova-3' }))?.id).toBe(order[first]?.id);
    }
  });

  it('applies a change of a service entry from its date on, never before', () => {
    const card = makeCard(
      [
        makeServiceRate({ id: 'old' }),
        makeServiceRate({ id: 'new', price: '0.0059', effective_from: '2025-03-01T00:00:00Z' }),
      ],
      { services },
    );
    expect(findRate(card, makeQuery({ at: new Date('2025-02-28T23:59:59.999Z') }))?.id).toBe('old');
    expect(findRate(card, makeQuery({ at: new Date('2025-03-01T00:00:00Z') }))?.id).toBe('new');
  });
});
