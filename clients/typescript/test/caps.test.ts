import { voice, initializeLogger } from '@livekit/agents';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Callmeter, type SessionBudget } from '@callmeter/client';
import { UsageForwarder } from '@callmeter/client/livekit';
import { BatchServer, standing, usage } from './batch-server.ts';
import { makeLlmMetric } from './llm-metrics.ts';

const PATH = '/api/sessions/session-1/budget';
const logged: string[] = [];
const logger = { warn: (m: string) => void logged.push(m), error: (m: string) => void logged.push(m) };

let server: BatchServer;
let url: string;
beforeAll(() => initializeLogger({ pretty: false, level: 'error' }));
beforeEach(async () => {
  logged.length = 0;
  server = new BatchServer();
  url = await server.start();
});
afterEach(async () => {
  await server.stop();
});

const until = async (check: () => boolean, ms = 15_000) => {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error('not within the time given');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
};

describe('the per-call cap watch', () => {
  it('reads no standing for a client without a watch', async () => {
    const meter = new Callmeter({ baseUrl: url, flushIntervalMs: 50, capCheckIntervalMs: 50, logger });
    for (let i = 0; i < 5; i += 1) meter.record(usage(i));
    await meter.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(meter.stats().capChecks).toBe(0);
    await meter.close(1000);
    expect(server.budgetReads).toEqual([]);
    expect(server.stored.size).toBe(5);
  });

  it('tells the worker once, through a slow read and a 503, without holding up usage', async () => {
    server.hangMs = 3000;
    server.budgetAnswers.push(
      'hang',
      { status: 503, body: { detail: 'unavailable' } },
      { status: 200, body: standing('session-1', false) },
    );
    const meter = new Callmeter({ baseUrl: url, flushIntervalMs: 50, capCheckIntervalMs: 200, logger });
    const told: SessionBudget[] = [];
    meter.watchCap('session-1', (budget) => void told.push(budget));
    meter.record(usage(0));
    await meter.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    // The first read hangs for 3 s: usage goes on being sent meanwhile.
    const started = Date.now();
    for (let i = 1; i < 4; i += 1) meter.record(usage(i));
    await meter.flush();
    expect(Date.now() - started).toBeLessThan(1500);
    await until(() => told.length > 0);
    for (let i = 4; i < 8; i += 1) meter.record(usage(i)); // told already: nothing more is read
    await meter.flush();
    await new Promise((resolve) => setTimeout(resolve, 500));
    await meter.close(1000);
    expect(told).toEqual([
      {
        sessionId: 'session-1',
        allowed: false,
        spent: '0.0123',
        cap: '0.05',
        remaining: '0',
        budgetId: '00000000-0000-4000-8000-0000000000b1',
      },
    ]);
    expect(server.budgetReads).toEqual([PATH, PATH, PATH]);
    expect(server.stored.size).toBe(8);
    expect(logged.filter((m) => m.includes('could not be read'))).toHaveLength(1);
  });

  it('contains a callback that throws or rejects, and sessionBudget reads the standing', async () => {
    server.budgetAnswers.push({ status: 200, body: standing('session-1', false) });
    const meter = new Callmeter({ baseUrl: url, flushIntervalMs: 50, capCheckIntervalMs: 50, logger });
    expect(await meter.sessionBudget('session-1')).toMatchObject({ allowed: false, spent: '0.0123', cap: '0.05' });
    meter.watchCap('session-1', () => {
      throw new Error('a bug of the worker');
    });
    meter.watchCap('session-1', () => Promise.reject(new Error('an async bug')));
    meter.record(usage(0));
    await until(() => logged.filter((m) => m.includes('onCapReached threw')).length === 2);
    await meter.close(1000);
    expect(server.budgetReads).toEqual([PATH, PATH]);
  });

  it('stops at endSession', async () => {
    server.budgetAnswers.push({ status: 200, body: standing('session-1', false) });
    const meter = new Callmeter({ baseUrl: url, flushIntervalMs: 50, capCheckIntervalMs: 50, logger });
    const told: SessionBudget[] = [];
    meter.watchCap('session-1', (budget) => void told.push(budget));
    server.script.push({ status: 200, body: { id: 'session-1', status: 'COMPLETED' } });
    await meter.endSession('session-1');
    meter.record(usage(0));
    await meter.flush();
    await new Promise((resolve) => setTimeout(resolve, 300));
    await meter.close(1000);
    expect([told, server.budgetReads]).toEqual([[], []]);
  });
});

const llmMetric = makeLlmMetric(1, 'gpt-4o-mini', { timestamp: 1_800_000_000_000 });

describe('the LiveKit forwarder’s onCapReached with a real AgentSession', () => {
  it('runs once when the call passes its cap, on the session’s usage, and its hang-up runs', async () => {
    server.budgetAnswers.push({ status: 200, body: standing('session-1', false, '0.0512') });
    const meter = new Callmeter({ baseUrl: url, flushIntervalMs: 50, capCheckIntervalMs: 50, logger });
    const session = new voice.AgentSession({});
    const told: SessionBudget[] = [];
    let hungUp = false;
    const forwarder = new UsageForwarder(meter, {
      sessionId: 'session-1',
      userId: 'user-1',
      onCapReached: async (budget) => {
        told.push(budget);
        await session.close();
        hungUp = true;
      },
    });
    forwarder.attach(session);
    for (const requestId of ['req-1', 'req-2']) {
      session._usageCollector.collect({ ...llmMetric, requestId });
      session.emit(
        voice.AgentSessionEventTypes.SessionUsageUpdated,
        voice.createSessionUsageUpdatedEvent({ usage: session.usage }),
      );
      await meter.flush();
    }
    await until(() => hungUp);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await meter.close(1000);
    expect(told.map((b) => [b.allowed, b.spent, b.cap])).toEqual([[false, '0.0512', '0.05']]);
    expect(server.budgetReads).toEqual([PATH]);
    expect(server.stored.size).toBe(2);
  });
});
