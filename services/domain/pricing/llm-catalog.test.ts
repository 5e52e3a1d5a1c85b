import { readFileSync } from 'node:fs';
import { calcPrice, findProvider, type ModelInfo } from '@pydantic/genai-prices';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { Exact } from '../../shared/exact-decimal.ts';
import { LISTED_LLM_PROVIDERS, LLM_CATALOG_VERSION, LlmCatalog, pricesInForce } from './llm-catalog.ts';
import type { TokenCounts } from './token-kinds.ts';

const catalog = new LlmCatalog();

/** The package's own usage names for our token kinds (and connected seconds), with every overlap it asks for given explicitly. */
function packageUsage(counts: TokenCounts, sessionSeconds = 0): Record<string, number> {
  const n = (text: string | undefined) => Number(text ?? 0);
  return {
    input_image_tokens: n(counts.image_input_tokens),
    cache_image_read_tokens: n(counts.cached_image_input_tokens),
    audio_seconds: sessionSeconds,
    input_tokens: n(counts.input_tokens),
    cache_read_tokens: n(counts.cached_input_tokens),
    cache_write_tokens: n(counts.cache_write_tokens),
    input_audio_tokens: n(counts.audio_input_tokens),
    cache_audio_read_tokens: n(counts.cached_audio_input_tokens),
    output_tokens: n(counts.output_tokens),
    output_audio_tokens: n(counts.audio_output_tokens),
    output_reasoning_tokens: n(counts.reasoning_tokens),
  };
}

/** Consistent token mixes: every part within its whole, as a provider reports them. */
const tokenMix: fc.Arbitrary<TokenCounts> = fc
  .record({
    fresh: fc.integer({ min: 0, max: 400_000 }),
    cachedText: fc.integer({ min: 0, max: 200_000 }),
    cacheWrite: fc.integer({ min: 0, max: 50_000 }),
    freshAudio: fc.integer({ min: 0, max: 50_000 }),
    cachedAudio: fc.integer({ min: 0, max: 20_000 }),
    freshImage: fc.integer({ min: 0, max: 20_000 }),
    cachedImage: fc.integer({ min: 0, max: 10_000 }),
    textOut: fc.integer({ min: 0, max: 100_000 }),
    audioOut: fc.integer({ min: 0, max: 50_000 }),
    reasoning: fc.integer({ min: 0, max: 1 }),
  })
  .map((m) => ({
    input_tokens: String(
      m.fresh + m.cachedText + m.cacheWrite + m.freshAudio + m.cachedAudio + m.freshImage + m.cachedImage,
    ),
    cached_input_tokens: String(m.cachedText + m.cachedAudio + m.cachedImage),
    cache_write_tokens: String(m.cacheWrite),
    audio_input_tokens: String(m.freshAudio + m.cachedAudio),
    cached_audio_input_tokens: String(m.cachedAudio),
    image_input_tokens: String(m.freshImage + m.cachedImage),
    cached_image_input_tokens: String(m.cachedImage),
    output_tokens: String(m.textOut + m.audioOut),
    audio_output_tokens: String(m.audioOut),
    reasoning_tokens: String(m.reasoning === 1 ? Math.floor(m.textOut / 2) : 0),
  }));

/** Every model of the listed providers, with every dated price entry it has. */
function listedModels(): { provider: string; model: ModelInfo; at: Date }[] {
  return LISTED_LLM_PROVIDERS.flatMap((providerId) => {
    const provider = findProvider({ providerId });
    if (provider === undefined) throw new Error(`the catalog has no provider ${providerId}`);
    return provider.models.flatMap((model) => {
      const starts = Array.isArray(model.prices)
        ? model.prices.flatMap((entry) =>
            entry.constraint?.type === 'start_date' ? [new Date(entry.constraint.start_date)] : [],
          )
        : [];
      return [new Date('2026-11-24T12:00:00Z'), ...starts].map((at) => ({ provider: providerId, model, at }));
    });
  });
}

describe('the LLM catalog', () => {
  it('prices every model of every listed provider at each of its dated prices, as the package does up to float rounding', () => {
    const counts: TokenCounts = {
      input_tokens: '123456',
      cached_input_tokens: '20000',
      cache_write_tokens: '1000',
      audio_input_tokens: '3000',
      cached_audio_input_tokens: '500',
      image_input_tokens: '2000',
      cached_image_input_tokens: '700',
      output_tokens: '4567',
      audio_output_tokens: '300',
      reasoning_tokens: '100',
    };
    const models = listedModels();
    expect(models.length).toBeGreaterThan(300);
    let priced = 0;
    // Connected time is priced as the package prices audio seconds: only where the model has a price per hour.
    const seconds = 754.5;
    for (const { provider, model, at } of models) {
      const ours = catalog.price(provider, model.id, counts, at, new Exact(seconds));
      const theirs = calcPrice(packageUsage(counts, seconds), model.id, { providerId: provider, timestamp: at });
      if (theirs === null) {
        expect([provider, model.id, ours]).toEqual([provider, model.id, null]);
        continue;
      }
      // Models the package prices only by units we do not carry (generated images, pages) cost 0 for tokens.
      const expected = new Exact(String(theirs.total_price));
      const actual = ours?.cost ?? new Exact(0);
      expect([
        provider,
        model.id,
        at.toISOString(),
        actual.minus(expected).abs().lte(expected.abs().times('1e-12').plus('1e-15')),
      ]).toEqual([provider, model.id, at.toISOString(), true]);
      if (ours !== null) priced += 1;
    }
    expect(priced).toBeGreaterThan(300);
  });

  it('costs exactly the sum of quantity × price ÷ per over disjoint parts that add up to every token, for any consistent mix', () => {
    const models = ['gpt-4o-mini', 'gpt-4o-realtime-preview', 'gpt-realtime', 'gpt-4.1', 'o3-mini'].map(
      (id) => ['openai', id] as const,
    );
    const others = [
      ['google', 'gemini-2.5-flash'],
      ['anthropic', 'claude-sonnet-4-20250514'],
      ['groq', 'llama-3.3-70b-versatile'],
    ] as const;
    fc.assert(
      fc.property(fc.constantFrom(...models, ...others), tokenMix, ([provider, model], counts) => {
        const ours = catalog.price(provider, model, counts, new Date('2026-11-24T12:00:00Z'));
        expect(ours).not.toBeNull();
        const sum = Exact.sum(
          0,
          ...ours!.components.map((part) => part.quantity.times(part.price).dividedBy(part.per)),
        );
        expect(ours!.cost.equals(sum)).toBe(true);
        const tokens = ours!.components.filter((part) => part.dimension !== 'requests').map((part) => part.quantity);
        expect(ours!.components.some((part) => part.dimension === 'session_duration_seconds')).toBe(false);
        expect(Exact.sum(0, ...tokens).toFixed()).toBe(
          new Exact(counts.input_tokens!).plus(counts.output_tokens!).toFixed(),
        );
        expect(tokens.every((quantity) => !quantity.isNegative())).toBe(true);
        const theirs = calcPrice(packageUsage(counts), model, {
          providerId: provider,
          timestamp: new Date('2026-11-24T12:00:00Z'),
        })!;
        expect(
          ours!.cost
            .minus(String(theirs.total_price))
            .abs()
            .lte(new Exact(String(theirs.total_price)).times('1e-12').plus('1e-15')),
        ).toBe(true);
      }),
      { numRuns: 300, seed: 18_001 },
    );
  });

  it('charges cached and audio tokens at their own rates and fresh text at the input rate (gpt-4o-mini: 0.15, cached 0.075 per 1M)', () => {
    const price = catalog.price(
      'OpenAI',
      'gpt-4o-mini-2024-07-18',
      { input_tokens: '1000', cached_input_tokens: '400', output_tokens: '200' },
      new Date('2026-11-24T00:00:00Z'),
    )!;
    expect(
      price.components.map((part) => [
        part.dimension,
        part.quantity.toFixed(),
        part.price.toFixed(),
        part.cost.toFixed(),
      ]),
    ).toEqual([
      ['input_tokens', '600', '0.15', '0.00009'],
      ['cached_input_tokens', '400', '0.075', '0.00003'],
      ['output_tokens', '200', '0.6', '0.00012'],
    ]);
    expect(price.cost.toFixed()).toBe('0.00024');
    expect(price.rate_id).toBe('genai-prices@0.1.8:openai:gpt-4o-mini');
  });

  it('charges image input and cached image input at their own rates where the model has them (gpt-realtime: 5, cached 0.5 per 1M)', () => {
    const counts = {
      input_tokens: '10000',
      cached_input_tokens: '3000',
      audio_input_tokens: '4000',
      cached_audio_input_tokens: '1000',
      image_input_tokens: '2500',
      cached_image_input_tokens: '500',
      output_tokens: '800',
      audio_output_tokens: '600',
    };
    const price = catalog.price('openai', 'gpt-realtime', counts, new Date('2026-11-24T00:00:00Z'))!;
    expect(price.components.map((part) => [part.dimension, part.quantity.toFixed(), part.price.toFixed()])).toEqual([
      ['input_tokens', '2000', '4'],
      ['cached_input_tokens', '1500', '0.4'],
      ['audio_input_tokens', '3000', '32'],
      ['cached_audio_input_tokens', '1000', '0.4'],
      ['image_input_tokens', '2000', '5'],
      ['cached_image_input_tokens', '500', '0.5'],
      ['output_tokens', '200', '16'],
      ['audio_output_tokens', '600', '64'],
    ]);
    // A model without image prices charges image tokens as input, as the vendor bills them.
    const mini = catalog.price('openai', 'gpt-4o-mini', counts, new Date('2026-11-24T00:00:00Z'))!;
    expect(mini.components.map((part) => part.dimension)).toEqual([
      'input_tokens',
      'cached_input_tokens',
      'output_tokens',
    ]);
    expect(mini.components[0]!.quantity.toFixed()).toBe('7000');
  });

  it('charges a realtime model billed by connected time per hour of it, and its tokens nothing (xAI voice agent)', () => {
    const at = new Date('2026-06-01T00:00:00Z');
    const tokens = { input_tokens: '5000', audio_input_tokens: '4000', output_tokens: '900' };
    const price = catalog.price('xai', 'grok-voice-latest', tokens, at, new Exact('90'))!;
    expect(
      price.components.map((part) => [
        part.dimension,
        part.quantity.toFixed(),
        part.price.toFixed(),
        part.per.toFixed(),
      ]),
    ).toEqual([['session_duration_seconds', '90', '3', '3600']]);
    expect(price.cost.toFixed()).toBe('0.075');
    // The same event without its connected time cannot be priced; the time alone can.
    expect(catalog.price('xai', 'grok-voice-latest', tokens, at)).toBeNull();
    expect(catalog.price('xai', 'grok-voice-latest', null, at, new Exact('60'))!.cost.toFixed()).toBe('0.05');
    // A model billed by tokens charges no time, and time alone is nothing it prices.
    const realtime = catalog.price('openai', 'gpt-realtime', tokens, at, new Exact('90'))!;
    expect(realtime.components.some((part) => part.dimension === 'session_duration_seconds')).toBe(false);
    expect(realtime.cost.toFixed()).toBe('0.1464');
    expect(catalog.price('openai', 'gpt-realtime', null, at, new Exact('90'))).toBeNull();
  });

  it('prices token-billed speech models by their tokens (gpt-4o-mini-tts: 0.6 in, 12 out; gpt-4o-transcribe: audio 6, text out 10)', () => {
    const at = new Date('2026-11-24T00:00:00Z');
    const tts = catalog.price(
      'openai',
      'gpt-4o-mini-tts',
      { input_tokens: '120', output_tokens: '2400', audio_output_tokens: '2400' },
      at,
    )!;
    expect(tts.components.map((part) => [part.dimension, part.quantity.toFixed(), part.price.toFixed()])).toEqual([
      ['input_tokens', '120', '0.6'],
      ['output_tokens', '2400', '12'],
    ]);
    const stt = catalog.price(
      'openai',
      'gpt-4o-transcribe',
      { input_tokens: '1500', audio_input_tokens: '1500', output_tokens: '90' },
      at,
    )!;
    expect(stt.components.map((part) => [part.dimension, part.quantity.toFixed(), part.price.toFixed()])).toEqual([
      ['input_tokens', '0', '2.5'],
      ['audio_input_tokens', '1500', '6'],
      ['output_tokens', '90', '10'],
    ]);
    expect(stt.cost.toFixed()).toBe('0.0099');
  });

  it('resolves the names fleets send (aliases, dated snapshots) and nothing it does not know', () => {
    expect(
      catalog.price('gemini', 'gemini-2.5-flash', { input_tokens: '1', output_tokens: '1' }, new Date())?.provider,
    ).toBe('google');
    expect(catalog.price('xai', 'grok-3', { input_tokens: '1', output_tokens: '1' }, new Date())?.provider).toBe(
      'x-ai',
    );
    expect(catalog.price('openai', 'no-such-model-xyz', { input_tokens: '1' }, new Date())).toBeNull();
    expect(catalog.price('no-such-provider', 'gpt-4o', { input_tokens: '1' }, new Date())).toBeNull();
  });

  it('takes a dated price from its start date only', () => {
    const dated = listedModels().find(
      ({ model }) =>
        Array.isArray(model.prices) && model.prices.some((entry) => entry.constraint?.type === 'start_date'),
    )!;
    const entries = dated.model.prices as Exclude<ModelInfo['prices'], Record<string, unknown>>;
    const start = entries.find((entry) => entry.constraint?.type === 'start_date')!.constraint as {
      start_date: string;
    };
    const before = new Date(new Date(start.start_date).getTime() - 1);
    expect(pricesInForce(dated.model, new Date(start.start_date)).since).toBe(start.start_date);
    expect(pricesInForce(dated.model, before).since).not.toBe(start.start_date);
  });
});

describe('the LLM catalog version', () => {
  it('is the installed package version, so that rate ids name the prices that applied', async () => {
    const manifest = JSON.parse(
      readFileSync(new URL('../../../node_modules/@pydantic/genai-prices/package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(LLM_CATALOG_VERSION).toBe(manifest.version);
  });
});
