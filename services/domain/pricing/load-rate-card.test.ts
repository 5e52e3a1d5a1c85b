import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RATE_CARD_URL, loadRateCard, parseRateCard, RateCardError } from './load-rate-card.ts';
import { makeCardJson, makeRate, makeServiceRate } from './pricing.fixtures.ts';

function problemsOf(json: unknown): readonly string[] {
  try {
    parseRateCard(json);
  } catch (error) {
    if (error instanceof RateCardError) return error.problems;
    throw error;
  }
  throw new Error('the card was accepted');
}

describe('loadRateCard', () => {
  it('loads the default card with the interface table under the workers provider ids', async () => {
    const card = await loadRateCard(DEFAULT_RATE_CARD_URL);
    expect(card.currency).toBe('USD');
    expect(card.rates.map((rate) => [rate.id, rate.provider, rate.price, rate.price_per, rate.pricing])).toEqual([
      ['stt-deepgram-2024-01', 'deepgram', '0.0077', '1', 'quantity'],
      ['stt-assemblyai-2024-01', 'assemblyai', '0.0078', '1', 'quantity'],
      ['stt-elevenlabs-2024-01', 'elevenlabs', '0.0167', '1', 'quantity'],
      ['llm-google-blended-2024-01', 'google', '0.00086', '1000', 'quantity'],
      ['llm-google-input-2024-01', 'google', '0.30', '1000000', 'input_tokens'],
      ['llm-google-output-2024-01', 'google', '2.50', '1000000', 'output_tokens'],
      ['tts-resemble-2024-01', 'resemble', '0.00004', '1', 'quantity'],
    ]);
  });

  it('names the file when it is not JSON', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'rate-card-'));
    const path = join(folder, 'rate-card.json');
    await writeFile(path, '{"version": 1,');
    try {
      const failure = loadRateCard(path);
      await expect(failure).rejects.toBeInstanceOf(RateCardError);
      await expect(failure).rejects.toThrow(`${path} is not JSON`);
    } finally {
      await rm(folder, { recursive: true });
    }
  });
});

describe('parseRateCard', () => {
  it('lower-cases provider ids, models and aliases, and resolves aliases in entries', () => {
    const card = parseRateCard(
      makeCardJson([makeRate({ event_type: 'llm_tokens', unit: 'token', provider: 'Gemini', model: 'Flash-2.5' })], {
        provider_aliases: { GEMINI: 'Google' },
      }),
    );
    expect(card.provider_aliases).toEqual({ gemini: 'google' });
    expect(card.rates[0]).toMatchObject({ provider: 'google', model: 'flash-2.5' });
  });

  it('returns a frozen card, so no caller can change a price in place', () => {
    const card = parseRateCard(makeCardJson([makeRate()]));
    expect(Object.isFrozen(card.rates[0])).toBe(true);
  });

  it('lists every schema problem', () => {
    const problems = problemsOf({
      ...makeCardJson([makeRate({ price: '1,5', effective_from: 'yesterday' })]),
      version: 2,
    });
    expect(problems).toHaveLength(3);
    expect(problems.join('\n')).toMatch(/version/);
    expect(problems.join('\n')).toMatch(/\/rates\/0\/price /);
    expect(problems.join('\n')).toMatch(/\/rates\/0\/effective_from/);
  });

  it('reports every semantic problem at once', () => {
    const problems = problemsOf(
      makeCardJson([
        makeRate({ id: 'unknown-type', event_type: 'video_minutes' }),
        makeRate({ id: 'wrong-unit', unit: 'second' }),
        makeRate({ id: 'zero-per', price_per: '0', effective_from: '2024-02-01T00:00:00Z' }),
        makeRate({ id: 'negative-price', price: '-0.01', effective_from: '2024-03-01T00:00:00Z' }),
        makeRate({ id: 'same-key', provider: 'Deepgram', effective_from: '2024-04-01T00:00:00Z' }),
        makeRate({ id: 'same-key-again', provider: 'deepgram', effective_from: '2024-04-01T00:00:00.000Z' }),
        makeRate({ id: 'same-key', effective_from: '2024-05-01T00:00:00Z' }),
      ]),
    );
    expect(problems).toEqual([
      'rate unknown-type: unknown event_type "video_minutes" (known: stt_minutes, llm_tokens, tts_characters)',
      'rate wrong-unit: unit "second" does not match the unit of stt_minutes, "minute"',
      'rate zero-per: price_per must be greater than 0, got "0"',
      'rate negative-price: price must not be negative, got "-0.01"',
      'rate same-key-again: same event_type, provider, model, user_id, pricing and effective_from as rate same-key',
      'rate same-key: duplicate id',
    ]);
  });

  it('refuses a rate over 1,000 per unit, so that no event of at most 10^12 units costs more than 10^15', () => {
    const card = makeCardJson([
      makeRate({ id: 'at-limit', price: '1000000', price_per: '1000' }),
      makeRate({ id: 'over', provider: 'acme', price: '1000.000000000000000001', price_per: '1' }),
    ]);
    expect(problemsOf(card)).toEqual([
      'rate over: price ÷ price_per is 1000.000000000000000001 per minute, over the limit of 1000 (so that an event of at most 1000000000000 units costs at most 1000000000000000)',
    ]);
  });

  it('refuses a card in another currency than the catalogs’, and an entry in another currency than the card’s', () => {
    expect(problemsOf(makeCardJson([makeRate({ currency: 'EUR' })], { currency: 'EUR' }))).toEqual([
      'currency: the card is in EUR, but the built-in catalogs that price what it lacks are in USD; costs are summed without conversion, so the card must be in USD',
    ]);
    expect(problemsOf(makeCardJson([makeRate({ id: 'euro', currency: 'EUR' })]))).toEqual([
      "rate euro: currency EUR is not the card's USD; costs are summed without conversion",
    ]);
  });

  it('sees an entry under an alias as a duplicate of the entry under the provider id', () => {
    const problems = problemsOf(
      makeCardJson([makeRate({ id: 'a', provider: 'google' }), makeRate({ id: 'b', provider: 'GEMINI' })]),
    );
    expect(problems).toEqual([
      'rate b: same event_type, provider, model, user_id, pricing and effective_from as rate a',
    ]);
  });

  it('rejects alias chains and aliases that differ only in case', () => {
    const problems = problemsOf(
      makeCardJson([makeRate()], { provider_aliases: { gemini: 'bard', Bard: 'google', BARD: 'google' } }),
    );
    expect(problems).toEqual([
      'provider_aliases: two aliases differ only in case',
      'provider_aliases: "gemini" points to "bard", which is itself an alias',
    ]);
  });

  it('keeps entries that differ by user, model or pricing apart', () => {
    const rates = [
      makeRate({ id: 'a' }),
      makeRate({ id: 'b', user_id: 'user-1' }),
      makeRate({ id: 'c', model: 'nova-3' }),
      makeRate({ id: 'd', provider: '*' }),
    ];
    expect(() => parseRateCard(makeCardJson(rates))).not.toThrow();
  });
});

describe('parseRateCard with service entries', () => {
  // Two event types of one service, so that a service entry has more than one rate to become.
  const services = {
    stt_minutes: { service: 'stt', unit: 'minute' },
    stt_stream_minutes: { service: 'stt', unit: 'minute' },
    llm_tokens: { service: 'llm', unit: 'token' },
    llm_requests: { service: 'llm', unit: 'request' },
  };

  it('makes a service entry one rate per event type of the service, each under the entry id', () => {
    const card = parseRateCard(
      makeCardJson([makeServiceRate({ id: 'stt-any', provider: 'DeepGram' }), makeRate({ id: 'stt-one' })], {
        services,
      }),
    );
    expect(card.rates.map((rate) => [rate.id, rate.event_type, rate.service, rate.provider])).toEqual([
      ['stt-any', 'stt_minutes', 'stt', 'deepgram'],
      ['stt-any', 'stt_stream_minutes', 'stt', 'deepgram'],
      ['stt-one', 'stt_minutes', undefined, 'deepgram'],
    ]);
  });

  it('refuses an entry naming both event_type and service, or neither, and names the rate', () => {
    const neither: Record<string, unknown> = makeServiceRate({ id: 'neither' });
    delete neither.service;
    const problems = problemsOf(makeCardJson([makeServiceRate({ id: 'both', event_type: 'stt_minutes' })]));
    const neitherProblems = problemsOf({ ...makeCardJson([]), rates: [neither] });
    expect([...problems, ...neitherProblems]).toEqual([
      'rate both: names both event_type "stt_minutes" and service "stt"; an entry names one of them',
      'rate neither: names neither event_type nor service; an entry names one of them',
    ]);
  });

  it('refuses a service no event type has, and names the rate and the known services', () => {
    expect(problemsOf(makeCardJson([makeServiceRate({ id: 'video-any', service: 'video' })], { services }))).toEqual([
      'rate video-any: unknown service "video" (known: stt, llm)',
    ]);
  });

  it('checks the unit of a service entry against every event type of the service', () => {
    const problems = problemsOf(
      makeCardJson(
        [
          makeServiceRate({ id: 'llm-any', service: 'llm', unit: 'token' }),
          makeServiceRate({ id: 'stt-seconds', unit: 'second' }),
        ],
        { services },
      ),
    );
    expect(problems).toEqual([
      'rate llm-any: unit "token" does not match the unit of llm_requests, "request" (service llm)',
      'rate stt-seconds: unit "second" does not match the unit of stt_minutes, "minute" (service stt)',
      'rate stt-seconds: unit "second" does not match the unit of stt_stream_minutes, "minute" (service stt)',
    ]);
  });

  it('sees two entries for the same service and key as duplicates, and ids as unique across both forms', () => {
    const problems = problemsOf(
      makeCardJson([
        makeServiceRate({ id: 'a' }),
        makeServiceRate({ id: 'b', provider: 'DEEPGRAM' }),
        makeRate({ id: 'a' }),
      ]),
    );
    expect(problems).toEqual([
      'rate b: same service, provider, model, user_id, pricing and effective_from as rate a',
      'rate a: duplicate id',
    ]);
  });

  it('accepts an event_type entry beside a service entry of the same key: lookups rank the event_type entry first', () => {
    expect(() =>
      parseRateCard(makeCardJson([makeServiceRate({ id: 'stt-any' }), makeRate({ id: 'stt-one' })])),
    ).not.toThrow();
  });
});
