import { beforeAll, describe, expect, it } from 'vitest';
import type { RateCard } from '../../../schemas/rate-card.ts';
import { loadCatalogs, type Catalogs } from './catalogs.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from './load-rate-card.ts';
import { priceUsage, priceUsageExactly, type UsageToPrice } from './price-usage.ts';
import { makeUsage } from './pricing.fixtures.ts';
import { listRates } from './rate-listing.ts';

// The usage kinds the frameworks report beyond text tokens: token-billed speech, image input and a
// realtime model's connected time, each a part of the breakdown.

let card: RateCard;
let catalogs: Catalogs;
beforeAll(async () => {
  card = await loadRateCard(DEFAULT_RATE_CARD_URL);
  catalogs = loadCatalogs();
});

const at = new Date('2026-11-24T12:00:00Z');
const price = (usage: Partial<UsageToPrice>) => {
  const event = makeUsage({ occurred_at: at, ...usage });
  const result = priceUsage(card, event, catalogs);
  expect(priceUsageExactly(card, event, catalogs)).toEqual(result);
  return result;
};
const parts = (priced: ReturnType<typeof price>) =>
  priced.components.map((part) => [part.dimension, part.quantity, part.unit, part.price, part.per, part.cost]);

describe('pricing the usage kinds of voice fleets', () => {
  it('prices OpenAI gpt-4o-mini-tts by its tokens, the quantity still its characters', () => {
    const tts = price({
      event_type: 'tts_characters',
      provider: 'openai',
      model: 'gpt-4o-mini-tts',
      quantity: '480',
      input_tokens: '120',
      output_tokens: '2400',
      audio_output_tokens: '2400',
    });
    expect(tts).toMatchObject({
      cost_source: 'computed',
      scope: 'catalog',
      quantity: '480',
      unit: 'character',
      service: 'tts',
      cost: '0.028872',
      rate_id: 'genai-prices@0.1.8:openai:gpt-4o-mini-tts',
    });
    expect(parts(tts)).toEqual([
      ['input_tokens', '120', 'token', '0.6', '1000000', '0.000072'],
      ['output_tokens', '2400', 'token', '12', '1000000', '0.0288'],
    ]);
    // Without its tokens there is no price for its characters: unpriced, never a silent 0.
    expect(
      price({ event_type: 'tts_characters', provider: 'openai', model: 'gpt-4o-mini-tts', quantity: '480' }),
    ).toMatchObject({ cost_source: 'unpriced', cost: '0' });
  });

  it('prices OpenAI transcription by its tokens where sent, else by its minutes', () => {
    const minutes = { event_type: 'stt_minutes', provider: 'openai', model: 'gpt-4o-mini-transcribe', quantity: '1.5' };
    const tokens = price({ ...minutes, input_tokens: '1500', audio_input_tokens: '1500', output_tokens: '90' });
    expect(parts(tokens)).toEqual([
      ['input_tokens', '0', 'token', '1.25', '1000000', '0'],
      ['audio_input_tokens', '1500', 'token', '3', '1000000', '0.0045'],
      ['output_tokens', '90', 'token', '5', '1000000', '0.00045'],
    ]);
    expect(tokens).toMatchObject({ quantity: '1.5', unit: 'minute', cost: '0.00495', scope: 'catalog' });
    expect(price(minutes)).toMatchObject({ cost: '0.0045', rate_id: 'catalog-openai-gpt-4o-mini-transcribe-2026-11' });
  });

  it("prices xAI's voice agent by its connected time, the tokens it reports included in it", () => {
    const voice = price({
      event_type: 'llm_tokens',
      provider: 'xai',
      model: 'grok-voice-latest',
      quantity: '6100',
      input_tokens: '5200',
      audio_input_tokens: '3900',
      output_tokens: '900',
      session_duration_seconds: '150',
    });
    expect(voice).toMatchObject({ cost_source: 'computed', scope: 'catalog', quantity: '6100', cost: '0.2' });
    expect(parts(voice)).toEqual([['session_duration_seconds', '150', 'second', '4.8', '3600', '0.2']]);
    expect(voice.rate_id).toBe('genai-prices@0.1.8:x-ai:grok-voice-latest@2026-08-05');
    // Before its price change, $3 an hour; the connected time alone prices too.
    expect(
      price({
        event_type: 'llm_tokens',
        provider: 'x-ai',
        model: 'grok-voice-latest',
        quantity: '0',
        session_duration_seconds: '60',
        occurred_at: new Date('2026-06-01T00:00:00Z'),
      }),
    ).toMatchObject({ cost: '0.05', quantity: '0', unit_cost: '0' });
    // Its tokens without the time cannot be priced.
    expect(
      price({
        event_type: 'llm_tokens',
        provider: 'xai',
        model: 'grok-voice-latest',
        quantity: '10',
        input_tokens: '10',
      }),
    ).toMatchObject({ cost_source: 'unpriced' });
  });

  it('charges image input at its own price on a realtime model, and ignores the connected time of one billed by tokens', () => {
    const realtime = price({
      event_type: 'llm_tokens',
      provider: 'openai',
      model: 'gpt-realtime',
      quantity: '3000',
      input_tokens: '2500',
      cached_input_tokens: '600',
      image_input_tokens: '1000',
      cached_image_input_tokens: '400',
      output_tokens: '500',
      session_duration_seconds: '42',
    });
    expect(realtime.components.map((part) => [part.dimension, part.quantity])).toEqual([
      ['input_tokens', '1300'],
      ['cached_input_tokens', '200'],
      ['image_input_tokens', '600'],
      ['cached_image_input_tokens', '400'],
      ['output_tokens', '500'],
    ]);
    expect(realtime.cost).toBe('0.01648');
    // Connected time alone, for a model that bills none, is listed unpriced (quantity 0), never a silent 0.
    expect(
      price({
        event_type: 'llm_tokens',
        provider: 'openai',
        model: 'gpt-realtime',
        quantity: '0',
        session_duration_seconds: '42',
      }),
    ).toMatchObject({ cost_source: 'unpriced', quantity: '0' });
  });

  it('prices a transcription model the speech catalog lacks per hour of audio from the LLM catalog (gpt-transcribe: 0.27)', () => {
    const minutes = price({ event_type: 'stt_minutes', provider: 'openai', model: 'gpt-transcribe', quantity: '2.5' });
    expect(parts(minutes)).toEqual([['quantity', '2.5', 'minute', '0.27', '60', '0.01125']]);
    expect(minutes).toMatchObject({ scope: 'catalog', rate_id: 'genai-prices@0.1.8:openai:gpt-transcribe' });
  });

  it('finds the speech prices of xAI under the names the plugins give it', () => {
    for (const provider of ['x-ai', 'xai', 'XAI'])
      expect(
        price({
          event_type: 'tts_characters',
          provider,
          model: 'unknown',
          quantity: '1000000',
          occurred_at: new Date('2026-11-27T00:00:00Z'),
        }),
      ).toMatchObject({
        cost: '4.2',
        rate_id: 'catalog-x-ai-tts-2026-11',
      });
  });

  it("lists a realtime model's price per hour of connected time and a model's image prices", () => {
    const listed = (model: string) =>
      listRates(card, catalogs, { provider: 'xai', model, at }).map((entry) => [
        entry.dimension,
        entry.price,
        entry.per,
      ]);
    expect(listed('grok-voice-latest')).toEqual([['session_duration_seconds', '4.8', '3600']]);
    expect(
      listRates(card, catalogs, { provider: 'openai', model: 'gpt-realtime', at })
        .filter((entry) => entry.dimension.includes('image'))
        .map((entry) => [entry.dimension, entry.price]),
    ).toEqual([
      ['image_input_tokens', '5'],
      ['cached_image_input_tokens', '0.5'],
    ]);
  });
});
