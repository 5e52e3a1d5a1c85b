import { randomUUID } from 'node:crypto';
import { calcPrice } from '@pydantic/genai-prices';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { SpeechCatalog } from '../../services/domain/pricing/index.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate, serviceEnv } from '../support/harness.ts';
import { FLEET_MIX, FLEET_UNPRICED, type FleetItem, type UnpricedFleetItem } from '../support/fleet-mix.ts';

// A fleet's usage (LiveKit's and Pipecat's plugin defaults, test/support/fleet-mix.ts) priced at the
// most specific price: token kinds, image tokens, token-billed speech and a realtime model's connected
// time each a part at its own rate, every event `computed` and never 0, the stored costs equal to the
// quotes and to the catalogs' own prices; the defaults nothing prices listed in FLEET_UNPRICED and
// stored as unpriced; a tenant's own price from its effective_from only, never repricing what is stored.

interface Running {
  readonly ingest: CallmeterProcess;
  readonly query: CallmeterProcess;
  readonly stop: () => Promise<unknown>;
}

const MODES = [
  {
    name: 'the embedded process',
    start: async (): Promise<Running> => {
      const app = await startCallmeter({ DATA_DIR: isolate('fleet-prices').dataDir, LOG_LEVEL: 'warn' });
      return { ingest: app, query: app, stop: () => app.stop() };
    },
  },
  {
    name: 'ingest apart over Kafka and Redis',
    start: async (): Promise<Running> => {
      const isolation = isolate('fleet-prices-kafka');
      const ingest = await startCallmeter(
        serviceEnv(isolation, { SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/ingest` }),
      );
      const query = await startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer,query' }));
      return { ingest, query, stop: () => Promise.allSettled([ingest.stop(), query.stop()]) };
    },
  },
] as const;

const speech = SpeechCatalog.load();
const SPEECH_RATIO: Record<string, [number, number]> = {
  minute: [1, 1],
  second: [60, 1],
  hour: [1, 60],
  character: [1, 1],
};

/** The package's usage names for an item's token kinds and connected seconds. */
function packageUsage(item: FleetItem): Record<string, number> {
  const t = item.tokens ?? {};
  const n = (text: string | undefined) => Number(text ?? 0);
  return {
    input_tokens: n(t.input_tokens),
    cache_read_tokens: n(t.cached_input_tokens),
    cache_write_tokens: n(t.cache_write_tokens),
    input_audio_tokens: n(t.audio_input_tokens),
    cache_audio_read_tokens: n(t.cached_audio_input_tokens),
    input_image_tokens: n(t.image_input_tokens),
    cache_image_read_tokens: n(t.cached_image_input_tokens),
    output_tokens: n(t.output_tokens),
    output_audio_tokens: n(t.audio_output_tokens),
    audio_seconds: n(item.session_duration_seconds),
  };
}

/**
 * What the catalogs themselves say the item costs: the package's own calculation for tokens and connected
 * time (and a transcription model's hours of audio), the speech file's entry for minutes and characters.
 */
function catalogCost(item: FleetItem, at: Date): { cost: Exact; float: boolean } {
  const providerId = item.catalogProvider ?? item.provider;
  const model = item.model ?? '';
  if (item.event_type === 'llm_tokens' || item.tokens !== undefined) {
    const priced = calcPrice(packageUsage(item), model, { providerId, timestamp: at });
    if (priced === null) throw new Error(`the catalog package has no price for ${item.provider} ${model}`);
    return { cost: new Exact(String(priced.total_price)), float: true };
  }
  const entry = speech.find(providerId, item.event_type, item.model, at);
  if (entry?.model === undefined && item.event_type === 'stt_minutes') {
    const seconds = Number(item.quantity) * 60;
    const audio = calcPrice({ audio_seconds: seconds, input_audio_seconds: seconds }, model, {
      providerId,
      timestamp: at,
    });
    if (audio !== null && (audio.model_price.input_audio_hours ?? audio.model_price.audio_hours) !== undefined)
      return { cost: new Exact(String(audio.total_price)), float: true };
  }
  if (entry === null) throw new Error(`the speech catalog has no entry for ${item.provider} ${model}`);
  const [times, divide] = SPEECH_RATIO[entry.unit]!;
  const cost = new Exact(item.quantity!).times(times).times(entry.price).dividedBy(new Exact(entry.per).times(divide));
  return { cost, float: false };
}

function body(item: FleetItem | UnpricedFleetItem, ids: { session_id?: string; user_id: string }) {
  return {
    ...ids,
    provider: item.provider,
    event_type: item.event_type,
    ...(item.model === null ? {} : { model: item.model }),
    ...(item.quantity === undefined ? {} : { quantity: item.quantity }),
    ...('tokens' in item ? (item.tokens ?? {}) : {}),
    ...('session_duration_seconds' in item && item.session_duration_seconds !== undefined
      ? { session_duration_seconds: item.session_duration_seconds }
      : {}),
    event_id: randomUUID(),
  };
}

const named = (item: FleetItem | UnpricedFleetItem) =>
  `${item.provider} ${item.model ?? '(no model)'} ${item.event_type}`;
const withTokens = (kind: string) => FLEET_MIX.filter((item) => item.tokens?.[kind as 'input_tokens'] !== undefined);

describe.each(MODES)('fleet prices on $name', (mode) => {
  let running: Running;
  const user = `fleet-${randomUUID().slice(0, 8)}`;
  let sessionId: string;
  const quotes: Exact[] = [];
  const post = <T>(path: string, payload: unknown) => call<T>(running.ingest.url, 'POST', path, payload);
  const read = <T>(path: string) => call<T>(running.query.url, 'GET', path, undefined, { 'x-user-id': user });
  // Quotes and the prices in force are the query service's (it prices as the consumer does); tenant entries are written through ingest.
  const quote = <T>(payload: unknown) => call<T>(running.query.url, 'POST', '/api/rates/quote', payload);

  beforeAll(async () => {
    running = await mode.start();
    sessionId = (await post<{ id: string }>('/api/sessions/', { room_name: `room-${user}`, user_id: user })).body.id;
  }, 120_000);

  afterAll(async () => {
    await running?.stop();
  });

  it(`quotes every one of the ${FLEET_MIX.length} provider and model pairs as computed and above 0, equal to the catalogs' own price`, async () => {
    expect(FLEET_MIX.length).toBeGreaterThanOrEqual(60);
    const at = new Date();
    for (const item of FLEET_MIX) {
      const quoted = await quote<{
        total_cost: string;
        cost_source: string;
        scope: string;
        components: { cost: string; quantity: string; price: string; per: string }[];
      }>({ ...body(item, { user_id: user }), timestamp: at.toISOString() });
      expect([named(item), quoted.status, quoted.body.cost_source]).toEqual([named(item), 200, 'computed']);
      const total = new Exact(quoted.body.total_cost);
      // A fleet model that costs nothing is a price missing, not a free model: it belongs in FLEET_UNPRICED.
      expect([named(item), total.greaterThan(0)]).toEqual([named(item), true]);
      // Each part is quantity × price ÷ per, and the total is the sum of the parts.
      for (const part of quoted.body.components)
        expect(
          new Exact(part.cost).equals(
            new Exact(part.quantity).times(part.price).dividedBy(part.per).toDecimalPlaces(18),
          ),
        ).toBe(true);
      expect(total.equals(Exact.sum(0, ...quoted.body.components.map((part) => part.cost)))).toBe(true);
      if (item.scope === 'catalog') {
        const expected = catalogCost(item, at);
        // The package sums floats: equal to its price up to float rounding; the speech file's entry exactly (to 18 decimals).
        const tolerance = expected.float ? expected.cost.times('1e-12').plus('1e-17') : new Exact('1e-18');
        expect([named(item), total.minus(expected.cost).abs().lte(tolerance)]).toEqual([named(item), true]);
      }
      expect([named(item), quoted.body.scope]).toEqual([named(item), item.scope]);
      quotes.push(total);
    }
  }, 120_000);

  it(`quotes every one of the ${FLEET_UNPRICED.length} defaults nothing prices as unpriced, so that the list stays true`, async () => {
    for (const item of FLEET_UNPRICED) {
      const quoted = await quote<{ total_cost: string; cost_source: string; components: unknown[] }>(
        body(item, { user_id: user }),
      );
      expect([named(item), quoted.status, quoted.body.cost_source, quoted.body.total_cost]).toEqual([
        named(item),
        200,
        'unpriced',
        '0',
      ]);
      expect(item.reason.length).toBeGreaterThan(10);
    }
  }, 60_000);

  it('stores the same events at their quotes and the unpriced defaults as unpriced, every view adding up; each answer carries its cost', async () => {
    const at = new Date().toISOString();
    const answer = await post<{ status: string; cost: string; cost_source: string }[]>(
      '/api/usage/events/batch',
      [...FLEET_MIX, ...FLEET_UNPRICED].map((item) => ({
        ...body(item, { session_id: sessionId, user_id: user }),
        timestamp: at,
      })),
    );
    expect(answer.body.map((result) => result.status)).toEqual([...FLEET_MIX, ...FLEET_UNPRICED].map(() => 'accepted'));
    expect(answer.body.map((result) => [result.cost_source, new Exact(result.cost).toFixed()])).toEqual([
      ...quotes.map((quote) => ['computed', quote.toFixed()]),
      ...FLEET_UNPRICED.map(() => ['unpriced', '0']),
    ]);
    const expectedTotal = Exact.sum(0, ...quotes).toFixed();
    const summary = await eventually(
      async () => {
        const read_ = await read<{ total_cost: string; unpriced_event_count: number; event_count: number }>(
          '/api/costs/summary',
        );
        expect(read_.body.event_count).toBe(FLEET_MIX.length + FLEET_UNPRICED.length);
        return read_.body;
      },
      30_000,
      200,
    );
    expect(summary.unpriced_event_count).toBe(FLEET_UNPRICED.length);
    expect(new Exact(summary.total_cost).toFixed()).toBe(expectedTotal);
    const breakdown = await read<{
      total_cost: string;
      events: {
        provider: string;
        event_type: string;
        quantity: string;
        unit_cost: string;
        total_cost: string;
        components: { dimension: string; cost: string }[];
      }[];
    }>(`/api/sessions/${sessionId}/cost-breakdown`);
    // Every event lists its priced parts, which add up to its cost; an LLM's unit cost is per 1,000 tokens
    // (0 for connected time alone, an event of no tokens).
    for (const event of breakdown.body.events) {
      expect(new Exact(event.total_cost).equals(Exact.sum(0, ...event.components.map((part) => part.cost)))).toBe(true);
      if (event.event_type === 'llm_tokens' && new Exact(event.quantity).isZero())
        expect(new Exact(event.unit_cost).isZero()).toBe(true);
      else if (event.event_type === 'llm_tokens')
        expect(
          new Exact(event.unit_cost).equals(
            new Exact(event.total_cost).div(event.quantity).times(1000).toDecimalPlaces(15),
          ),
        ).toBe(true);
    }
    // The stored record carried every kind: the consumer priced image tokens and connected time from it.
    const partOf = (dimension: string) =>
      breakdown.body.events.filter((event) => event.components.some((part) => part.dimension === dimension));
    expect(partOf('cached_audio_input_tokens')).toHaveLength(withTokens('cached_audio_input_tokens').length);
    expect(partOf('image_input_tokens')).toHaveLength(1);
    expect(partOf('cached_image_input_tokens')).toHaveLength(1);
    expect(partOf('session_duration_seconds').map((event) => event.provider)).toEqual(['x-ai', 'x-ai']);
    expect(new Exact(breakdown.body.total_cost).toFixed()).toBe(expectedTotal);
    expect(
      breakdown.body.events
        .map((event) => new Exact(event.total_cost).toFixed())
        .filter((cost) => cost !== '0')
        .sort(),
    ).toEqual(quotes.map((quote) => quote.toFixed()).sort());
    const unpriced = (
      await read<{ provider: string; model: string; event_type: string; event_count: number }[]>('/api/costs/unpriced')
    ).body;
    expect(unpriced.map((row) => `${row.provider} ${row.model || '(no model)'} ${row.event_type}`).sort()).toEqual(
      FLEET_UNPRICED.map(named).sort(),
    );
    // The summary's services and the breakdown's items show their parts (cached against fresh tokens), which add up to them.
    const services = (
      await read<{ by_service: { event_type: string; cost: string; parts: { dimension: string; cost: string }[] }[] }>(
        '/api/costs/summary',
      )
    ).body.by_service;
    for (const service of services)
      expect(new Exact(service.cost).equals(Exact.sum(0, ...service.parts.map((part) => part.cost)))).toBe(true);
    const partsOf = (eventType: string) =>
      services.find((service) => service.event_type === eventType)!.parts.map((part) => part.dimension);
    expect(partsOf('llm_tokens')).toEqual(
      expect.arrayContaining([
        'input_tokens',
        'cached_input_tokens',
        'cache_write_tokens',
        'audio_input_tokens',
        'cached_audio_input_tokens',
        'image_input_tokens',
        'cached_image_input_tokens',
        'output_tokens',
        'audio_output_tokens',
        'session_duration_seconds',
      ]),
    );
    expect(partsOf('stt_minutes')).toEqual(expect.arrayContaining(['quantity', 'audio_input_tokens', 'output_tokens']));
    expect(partsOf('tts_characters')).toEqual(expect.arrayContaining(['quantity', 'input_tokens', 'output_tokens']));
    const items = (
      await read<{ items: { cost: string; parts: { cost: string }[] }[] }>(`/api/sessions/${sessionId}/cost-breakdown`)
    ).body.items;
    for (const item of items)
      expect(new Exact(item.cost).equals(Exact.sum(0, ...item.parts.map((part) => part.cost)))).toBe(true);
  }, 60_000);

  it('lists an LLM’s catalog price of each token kind, and a speech model’s with its source', async () => {
    const mini = await call<{ dimension: string; price: string; per: string; scope: string }[]>(
      running.query.url,
      'GET',
      '/api/rates?provider=openai&model=gpt-4o-mini',
    );
    expect(mini.status).toBe(200);
    expect(mini.body.map((entry) => [entry.scope, entry.dimension, entry.price, entry.per])).toEqual([
      ['catalog', 'input_tokens', '0.15', '1000000'],
      ['catalog', 'cached_input_tokens', '0.075', '1000000'],
      ['catalog', 'output_tokens', '0.6', '1000000'],
    ]);
    const deepgram = await call<{ scope: string; id: string }[]>(
      running.query.url,
      'GET',
      '/api/rates?provider=deepgram&service=stt',
    );
    expect(deepgram.body[0]).toMatchObject({ scope: 'card', id: 'stt-deepgram-2024-01' });
  });

  it('lists usage nothing priced, by provider, model and event type', async () => {
    const answer = await post<{ status: string }[]>(
      '/api/usage/events/batch',
      [1, 2, 3].map((n) => ({
        session_id: sessionId,
        user_id: user,
        provider: 'acme-voice',
        model: 'v9',
        event_type: 'tts_characters',
        quantity: n * 100,
      })),
    );
    expect(answer.body.map((result) => result.status)).toEqual(['accepted', 'accepted', 'accepted']);
    const unpriced = await eventually(
      async () => {
        const listed =
          await read<{ provider: string; model: string; event_type: string; event_count: number; quantity: string }[]>(
            '/api/costs/unpriced',
          );
        expect(listed.body).toHaveLength(FLEET_UNPRICED.length + 1);
        return listed.body;
      },
      30_000,
      200,
    );
    expect(unpriced.find((row) => row.provider === 'acme-voice')).toMatchObject({
      provider: 'acme-voice',
      model: 'v9',
      event_type: 'tts_characters',
      unit: 'character',
      event_count: 3,
      quantity: '600',
    });
  }, 60_000);

  it("applies a tenant's own price from its effective_from within 5 seconds, never to what is stored, and ends it on DELETE", async () => {
    const cartesia = FLEET_MIX.find((item) => item.provider === 'cartesia' && item.event_type === 'tts_characters')!;
    const before = await read<{ total_cost: string }>('/api/costs/summary');
    const past = await post<{ detail: { loc: string[] }[] }>('/api/rates', {
      user_id: user,
      provider: 'cartesia',
      event_type: 'tts_characters',
      price: '0.01',
      per: '1000',
      // Older than the usage window (USAGE_MAX_AGE_DAYS, 35): no usage of that instant is taken.
      effective_from: new Date(Date.now() - 36 * 86_400_000).toISOString(),
    });
    expect([past.status, past.body.detail[0]!.loc]).toEqual([422, ['body', 'effective_from']]);
    expect((await call(running.ingest.url, 'DELETE', '/api/rates/stt-deepgram-2024-01')).status).toBe(409);
    expect((await call(running.ingest.url, 'DELETE', '/api/rates/tenant-no-such-rate')).status).toBe(404);

    const created = await post<{ id: string; scope: string; price: string; per: string }>('/api/rates', {
      user_id: user,
      provider: 'Cartesia',
      event_type: 'tts_characters',
      price: '0.01',
      per: '1000',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ scope: 'tenant', price: '0.01', per: '1000' });
    const quoteOf = async (who: string) =>
      (await quote<{ total_cost: string; scope: string }>({ ...body(cartesia, { user_id: who }), quantity: '1000' }))
        .body;
    const since = Date.now();
    const tenantQuote = await eventually(
      async () => {
        const quote = await quoteOf(user);
        expect(quote.scope).toBe('tenant');
        return quote;
      },
      10_000,
      100,
    );
    expect(Date.now() - since).toBeLessThan(5_000);
    expect(tenantQuote.total_cost).toBe('0.01');
    // Another tenant still pays the catalog price.
    expect((await quoteOf(`${user}-other`)).scope).toBe('catalog');

    // An event after it is priced at the tenant's price once the pricing process has it; what was stored before is not repriced.
    await eventually(
      async () => {
        const listed = await call<{ id: string }[]>(
          running.query.url,
          'GET',
          `/api/rates?provider=cartesia&user_id=${user}`,
        );
        expect(listed.body.map((entry) => entry.id)).toContain(created.body.id);
      },
      10_000,
      100,
    );
    await new Promise((resolve) => setTimeout(resolve, 5_000));
    const single = await post<{ total_cost: string; unit_cost: string; cost: string; cost_source: string }>(
      '/api/usage/events',
      { ...body(cartesia, { session_id: sessionId, user_id: user }), quantity: '1000' },
    );
    expect(single.status).toBe(201);
    // The answer's cost is ingest's price at acceptance; where ingest reads the same store as the consumer (the embedded process), the tenant's.
    if (running.ingest === running.query)
      expect(single.body).toMatchObject({
        total_cost: '0.01',
        unit_cost: '0.00001',
        cost: '0.01',
        cost_source: 'computed',
      });
    const after = await eventually(
      async () => {
        const summary = await read<{ total_cost: string }>('/api/costs/summary');
        expect(new Exact(summary.body.total_cost).equals(new Exact(before.body.total_cost).plus('0.01'))).toBe(true);
        return summary.body;
      },
      30_000,
      200,
    );
    expect(after.total_cost).toBeDefined();

    const ended = await call<{ effective_to: string | null }>(
      running.ingest.url,
      'DELETE',
      `/api/rates/${created.body.id}`,
    );
    expect([ended.status, ended.body.effective_to === null]).toEqual([200, false]);
    await eventually(async () => expect((await quoteOf(user)).scope).toBe('catalog'), 10_000, 100);
  }, 90_000);
});
