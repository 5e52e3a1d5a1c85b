import { voice, initializeLogger } from '@livekit/agents';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Callmeter, type SessionBudget } from '@callmeter/client';
import { UsageForwarder } from '@callmeter/client/livekit';
import { call } from '../../../test/support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../../../test/support/callmeter-process.ts';
import { eventually, isolate } from '../../../test/support/harness.ts';
import { makeLlmMetric } from './llm-metrics.ts';

// The LiveKit forwarder's onCapReached against callmeter itself (the embedded process, as `npm start` runs
// it): a per-call cap of the tenant, the call's usage made by a real voice.AgentSession's usage collector
// and forwarded by the installed package, the standing read from GET /api/sessions/{id}/budget.
// caps.test.ts tests the watch's timing against a scripted server; this, that the real one stops the call.

const USER = 'tenant-ts-livekit-cap';
const MODEL = { provider: 'openai', model: 'gpt-4o-mini', event_type: 'llm_tokens' } as const;
// The tenant's own prices, so that the spend is known to the last decimal whatever the built-in catalogs say.
// One LLM request of llmMetric (120 prompt tokens, 64 of them cached, 30 completion tokens) costs
// 56 × 2 + 64 × 1 + 30 × 10 = 476 millionths: the cap lies between one request and two.
const PRICES = [
  { dimension: 'input_tokens', price: '2' },
  { dimension: 'cached_input_tokens', price: '1' },
  { dimension: 'output_tokens', price: '10' },
] as const;
const CAP = '0.0005';

const llmMetric = makeLlmMetric(1, MODEL.model, { timestamp: Date.now() });

const logger = { warn: () => undefined, error: () => undefined };

let app: CallmeterProcess;
beforeAll(async () => {
  initializeLogger({ pretty: false, level: 'error' });
  app = await startCallmeter({ DATA_DIR: isolate('ts-livekit-cap').dataDir, LOG_LEVEL: 'warn' });
}, 120_000);
afterAll(async () => {
  await app?.stop();
});

/** The tenant's prices, once the process prices with them (its reader of tenant entries runs every 2 s). */
async function priceTheModel(): Promise<void> {
  for (const { dimension, price } of PRICES) {
    const created = await call(app.url, 'POST', '/api/rates', {
      user_id: USER,
      ...MODEL,
      dimension,
      price,
      per: '1000000',
    });
    expect(created.status).toBe(201);
  }
  await eventually(async () => {
    const quote = await call<{ scope: string }>(app.url, 'POST', '/api/rates/quote', {
      user_id: USER,
      ...MODEL,
      input_tokens: 1,
      output_tokens: 0,
    });
    expect(quote.body.scope).toBe('tenant');
  });
}

describe('the LiveKit forwarder’s onCapReached against callmeter', () => {
  it('runs once, with the exact standing, when a real AgentSession’s usage passes the call’s cap, and its hang-up runs', async () => {
    await priceTheModel();
    const budget = await call<{ id: string }>(app.url, 'POST', '/api/budgets', {
      name: 'per call',
      user_id: USER,
      per_call: true,
      period: 'none',
      amount: CAP,
      action: 'notify',
    });
    expect(budget.status).toBe(201);
    const meter = new Callmeter({ baseUrl: app.url, flushIntervalMs: 50, capCheckIntervalMs: 100, logger });
    const { id } = await meter.startSession({ roomName: `room-${Date.now()}`, userId: USER });
    const session = new voice.AgentSession({});
    const told: SessionBudget[] = [];
    let hungUp = false;
    new UsageForwarder(meter, {
      sessionId: id,
      userId: USER,
      onCapReached: async (standing) => {
        told.push(standing);
        await session.close();
        hungUp = true;
      },
    }).attach(session);
    const request = async (requestId: string) => {
      session._usageCollector.collect({ ...llmMetric, requestId });
      session.emit(
        voice.AgentSessionEventTypes.SessionUsageUpdated,
        voice.createSessionUsageUpdatedEvent({ usage: session.usage }),
      );
      await meter.flush();
    };

    await request('req-1');
    // Under the cap: read (allowed) and not told.
    await eventually(async () => expect(meter.stats().capChecks).toBeGreaterThanOrEqual(1));
    expect(told).toEqual([]);
    await request('req-2');
    await eventually(async () => expect(hungUp).toBe(true));
    // The watch stops once it told the worker: nothing more, however long the call lasts.
    await new Promise((resolve) => setTimeout(resolve, 300));
    const standing = {
      sessionId: id,
      allowed: false,
      spent: '0.000952',
      cap: CAP,
      remaining: '0',
      budgetId: budget.body.id,
    };
    expect(told).toEqual([standing]);
    expect(await meter.sessionBudget(id)).toEqual(standing);
    expect(await meter.close(1000)).toBe(true);
  });
});
