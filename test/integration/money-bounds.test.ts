import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { USAGE_LIMITS } from '../../schemas/records/usage.ts';
import { costBreakdown } from '../../services/query/cost-breakdown.ts';
import { costByAgent } from '../../services/query/cost-by-agent.ts';
import { costSummary } from '../../services/query/cost-summary.ts';
import { costTimeline } from '../../services/query/cost-timeline.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { MemoryLiveUsage } from '../../services/shared/redis/live-usage.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { isolate, testConfig } from '../support/harness.ts';
import { expectedTotals, storedTotals } from '../support/rollups.ts';

const MAX_QUANTITY = String(USAGE_LIMITS.MAX_QUANTITY);
const MAX_REPORTED = String(USAGE_LIMITS.MAX_REPORTED_COST);
const MAX_EVENT_COST = String(USAGE_LIMITS.MAX_EVENT_COST);

/** The default card plus the largest rate a card may hold: 1,000 a minute for provider "premium". */
function writeCardWithLargestRate(dir: string): string {
  const card = JSON.parse(
    readFileSync(path.resolve(import.meta.dirname, '../../infra/rate-card/rate-card.json'), 'utf8'),
  ) as { rates: unknown[] };
  card.rates.push({
    id: 'stt-premium',
    event_type: 'stt_minutes',
    provider: 'premium',
    unit: 'minute',
    price: '1000',
    price_per: '1',
    pricing: 'quantity',
    effective_from: '2020-01-01T00:00:00Z',
  });
  const file = path.join(dir, 'rate-card.json');
  writeFileSync(file, JSON.stringify(card));
  return file;
}

/** Every cost view of one user, as the dashboard reads them, and each one's total. */
async function viewTotals(read: (path: string) => Promise<unknown>, sessionIds: readonly string[]) {
  const summary = (await read('/api/costs/summary')) as { total_cost: string };
  const timeline = (await read('/api/costs/timeline')) as { total_cost: string }[];
  const byAgent = (await read('/api/costs/by-agent')) as { total_cost: string }[];
  const breakdowns = (await Promise.all(sessionIds.map((id) => read(`/api/sessions/${id}/cost-breakdown`)))) as {
    total_cost: string;
  }[];
  const sum = (items: { total_cost: string }[]) => Exact.sum(0, ...items.map((item) => item.total_cost)).toFixed();
  return { summary: summary.total_cost, timeline: sum(timeline), by_agent: sum(byAgent), breakdowns: sum(breakdowns) };
}

describe('money at its bounds on the embedded process', () => {
  let app: CallmeterProcess;
  let session: string;
  const USER = 'tenant-bounds';
  const post = (path: string, body: unknown) => call<unknown>(app.url, 'POST', path, body);
  const read = async (path: string) =>
    (await call<unknown>(app.url, 'GET', path, undefined, { 'x-user-id': USER })).body;

  beforeAll(async () => {
    const { dataDir } = isolate('money-bounds');
    app = await startCallmeter({
      DATA_DIR: dataDir,
      RATE_CARD_PATH: writeCardWithLargestRate(dataDir),
      LOG_LEVEL: 'warn',
    });
    session = (
      await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
        room_name: `bounds-${randomUUID()}`,
        user_id: USER,
        agent_id: 'agent-1',
      })
    ).body.id;
  });

  afterAll(async () => {
    await app?.stop();
  });

  const event = (overrides: Record<string, unknown>) => ({
    session_id: session,
    user_id: USER,
    event_type: 'stt_minutes',
    event_id: randomUUID(),
    ...overrides,
  });

  it('refuses the reproduction (200 events of an unknown provider at 10^12 × 10^6) and every value one step past its bound, pydantic-shaped', async () => {
    const reproduction = await post(
      '/api/usage/events/batch',
      Array.from({ length: 200 }, () => event({ provider: 'unknown', quantity: 1e12, unit_cost: 1e6 })),
    );
    const items = reproduction.body as { status: string; errors: { type: string; loc: unknown[] }[] }[];
    expect(
      items.every(
        (item) =>
          item.status === 'rejected' &&
          item.errors[0]!.type === 'value_error' &&
          item.errors[0]!.loc[2] === 'unit_cost',
      ),
    ).toBe(true);
    const refused = async (overrides: Record<string, unknown>) => {
      const answer = await post('/api/usage/events', event({ provider: 'unknown', ...overrides }));
      expect(answer.status, JSON.stringify(overrides)).toBe(422);
      return (answer.body as { detail: { type: string; loc: unknown[]; ctx?: unknown }[] }).detail[0]!;
    };
    expect(await refused({ quantity: '1000000000000.000000000000000001' })).toMatchObject({
      type: 'less_than_equal',
      loc: ['body', 'quantity'],
      ctx: { le: USAGE_LIMITS.MAX_QUANTITY },
    });
    expect(await refused({ quantity: 1, total_cost: '1000000.000000000000000001' })).toMatchObject({
      type: 'less_than_equal',
      loc: ['body', 'total_cost'],
    });
    expect(await refused({ event_type: 'llm_tokens', input_tokens: 1e12 + 1 })).toMatchObject({
      type: 'less_than_equal',
      loc: ['body', 'input_tokens'],
    });
    expect(await refused({ event_type: 'llm_tokens', usage_data: { output_tokens: 1e12 + 1 } })).toMatchObject({
      type: 'less_than_equal',
      loc: ['body', 'usage_data', 'output_tokens'],
    });
    expect(await refused({ quantity: 1e12, unit_cost: '0.000001000000000001' })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'unit_cost'],
    });
    expect(((await read('/api/costs/summary')) as { event_count: number }).event_count).toBe(0);
  });

  it('stores every event at its bound exactly, and every view reads the same total', async () => {
    const atBounds = [
      event({ provider: 'premium', quantity: MAX_QUANTITY }), // the card's largest rate: 10^15
      event({ provider: 'unknown', quantity: MAX_QUANTITY, unit_cost: '0.000001' }), // 10^6 reported per unit
      event({ provider: 'unknown', quantity: MAX_QUANTITY, total_cost: MAX_REPORTED }), // 10^6 reported in total
      event({ provider: 'google', event_type: 'llm_tokens', usage_data: { input_tokens: 4e11, output_tokens: 6e11 } }), // 0.30 and 2.50 per 1M tokens
    ];
    const answer = await post('/api/usage/events/batch', atBounds);
    expect((answer.body as { status: string }[]).map((item) => item.status)).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'accepted',
    ]);
    const expected = new Exact(MAX_EVENT_COST)
      .plus(MAX_REPORTED)
      .plus(MAX_REPORTED)
      .plus(new Exact(4e11).times('0.30').plus(new Exact(6e11).times('2.50')).div(1e6))
      .toFixed();
    expect(expected).toBe('1000000003620000');
    expect(await viewTotals(read, [session])).toEqual({
      summary: expected,
      timeline: expected,
      by_agent: expected,
      breakdowns: expected,
    });
  });
});

describe('sums over the largest events, past what Decimal(38, 18) holds', () => {
  const USER = 'tenant-volume';
  const EVENTS = 200_000;
  const NOW = Date.now();
  const sessions = [randomUUID(), randomUUID()];
  let ch: ClickHouse;

  beforeAll(async () => {
    ch = await createClickHouse(testConfig(isolate('money-volume')));
    await migrate(ch, createLogger('silent'));
    const sessionRow = (id: string) => ({
      id,
      room_name: `room-${id}`,
      status: 'COMPLETED',
      user_id: USER,
      session_data: '{}',
      created_at: NOW,
      updated_at: NOW,
      version: 2,
      record_id: randomUUID(),
    });
    await ch.client.insert({
      table: `${ch.database}.sessions`,
      values: sessions.map(sessionRow),
      format: 'JSONEachRow',
    });
    // One insert, as a large consumer batch would be: the views sum it in the wide type before it lands.
    await ch.client.command({
      query: `INSERT INTO ${ch.database}.usage_events (id, user_id, agent_id, session_id, provider, service, event_type, quantity, unit, unit_cost, cost, reported_total_cost, cost_source, occurred_at, received_at)
        SELECT generateUUIDv4(number), {user:String}, 'agent-1', if(number % 2 = 0, {s0:UUID}, {s1:UUID}), 'premium', 'stt', 'stt_minutes', {quantity:Decimal(38, 18)}, 'minute', 1000,
               {cost:Decimal(38, 18)}, {reported:Decimal(38, 18)}, 'computed',
               fromUnixTimestamp64Milli(toInt64({now:Int64}) - toInt64(number * 12960), 'UTC'), fromUnixTimestamp64Milli(toInt64({now:Int64}), 'UTC')
        FROM numbers({events:UInt32})`,
      query_params: {
        user: USER,
        s0: sessions[0],
        s1: sessions[1],
        quantity: MAX_QUANTITY,
        cost: MAX_EVENT_COST,
        reported: MAX_REPORTED,
        now: NOW,
        events: EVENTS,
      },
    });
  }, 120_000);

  afterAll(async () => {
    await ch?.client.close();
  });

  it('keeps 200,000 events of 10^15 (2 × 10^20, over the 1.7 × 10^20 of Decimal(38, 18)) exact and positive in every table and every view', async () => {
    const total = new Exact(MAX_EVENT_COST).times(EVENTS).toFixed();
    expect(total).toBe('200000000000000000000');
    expect(await storedTotals(ch)).toEqual(expectedTotals(EVENTS, total));
    // The 200,000 events span 30 days back from NOW: every view's range ends with the current bucket.
    const summary = await costSummary(ch, USER, 'UTC', NOW + 1);
    const timeline = await costTimeline(ch, USER, { start: null, end: null }, 'daily', 'Asia/Kolkata', NOW + 1);
    const byAgent = await costByAgent(ch, USER, { start: null, end: null }, 50);
    const breakdowns = await Promise.all(sessions.map((id) => costBreakdown(ch, new MemoryLiveUsage(), id, USER)));
    const sum = (items: readonly { total_cost: string }[]) =>
      Exact.sum(0, ...items.map((item) => item.total_cost)).toFixed();
    expect({
      summary: summary.total_cost,
      timeline: sum(timeline),
      by_agent: sum(byAgent),
      breakdowns: sum(breakdowns),
    }).toEqual({ summary: total, timeline: total, by_agent: total, breakdowns: total });
    expect(summary.reported_total_cost).toBe(new Exact(MAX_REPORTED).times(EVENTS).toFixed());
    expect(summary.by_service).toContainEqual(
      expect.objectContaining({ quantity: new Exact(MAX_QUANTITY).times(EVENTS).toFixed() }),
    );
  }, 60_000);
});
