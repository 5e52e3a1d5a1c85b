import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { LIVE_USAGE_MAX_ENTRIES, liveUsageKey } from '../../services/shared/redis/live-usage.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { CostLedger, expectViewsExact, openLedgerSession } from '../support/cost-ledger.ts';
import { eventually, isolate, serviceEnv } from '../support/harness.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';

// A client's retry storm: the same event ids resent many times, through two ingest processes at once and
// across a consumer killed and started again, is counted once, and Redis keeps no key per event (the
// usage claims live only while their round is in flight). The embedded mode has no Redis and no claims:
// its journal writer stores one round at a time, and the storm is still counted once there.

interface Running {
  /** Two ingest processes (the same one when embedded). */
  readonly ingests: readonly [CallmeterProcess, CallmeterProcess];
  query: CallmeterProcess;
  /** Kills the consumer and starts it again on its data; null when the process serves the steady tenant too. */
  readonly restartConsumer: (() => Promise<void>) | null;
  /** The Redis key prefix of this mode's processes; null: no Redis. */
  readonly redisPrefix: string | null;
  readonly stop: () => Promise<unknown>;
}

const MODES = [
  {
    name: 'the embedded process',
    redis: false,
    start: async (): Promise<Running> => {
      const app = await startCallmeter({ DATA_DIR: isolate('hostile-claims').dataDir, LOG_LEVEL: 'warn' });
      return { ingests: [app, app], query: app, restartConsumer: null, redisPrefix: null, stop: () => app.stop() };
    },
  },
  {
    name: 'ingest apart over Kafka and Redis',
    redis: true,
    start: async (): Promise<Running> => {
      const isolation = isolate('hostile-claims-kafka');
      const ingest = (name: string) =>
        startCallmeter(serviceEnv(isolation, { SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/${name}` }));
      const consumer = () => startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer,query' }), 120_000);
      const [a, b, query] = await Promise.all([ingest('ingest-a'), ingest('ingest-b'), consumer()]);
      const running: Running = {
        ingests: [a, b],
        query,
        restartConsumer: async () => {
          await running.query.stop('SIGKILL');
          running.query = await consumer();
        },
        redisPrefix: isolation.keyPrefix,
        stop: () => Promise.allSettled([a.stop(), b.stop(), running.query.stop()]),
      };
      return running;
    },
  },
] as const;

const EVENTS = 300;
const RESENDS = 6;
// resemble: 0.00004 a character.
const characters = (n: number) => new Exact('0.00004').times(n);

describe.each(MODES)('a retry storm beside a steady tenant, on $name', (mode) => {
  let running: Running;
  let steady: SteadyTenant;
  let redis: Redis | null = null;
  const ledger = new CostLedger();
  const settle = <T>(check: () => Promise<T>) => eventually(check, 60_000, 250);

  const openSession = (user: string) => openLedgerSession(running.ingests[0].url, ledger, user);

  /** One batch to one ingest process; every item must be accepted (a resend of an accepted id is accepted again). */
  async function sendBatch(ingest: CallmeterProcess, events: readonly Record<string, unknown>[]) {
    const answer = await call<{ status: string }[]>(ingest.url, 'POST', '/api/usage/events/batch', events);
    expect(answer.status).toBe(200);
    expect(answer.body.filter((item) => item.status !== 'accepted')).toEqual([]);
  }

  /** Usage claims left in Redis under this mode's prefix, and every key of the prefix. */
  async function redisKeys(): Promise<{ claims: number; all: number }> {
    let claims = 0;
    let all = 0;
    const prefix = running.redisPrefix!;
    for await (const keys of redis!.scanStream({ match: `${prefix}*`, count: 1_000 }) as AsyncIterable<string[]>) {
      all += keys.length;
      claims += keys.filter((key) => key.startsWith(`${prefix}usage-claim:`)).length;
    }
    return { claims, all };
  }

  beforeAll(async () => {
    running = await mode.start();
    if (running.redisPrefix !== null) redis = new Redis(inject('services').redisUrl);
    const steadySession = await openSession('tenant-steady');
    steady = new SteadyTenant(running.ingests[0].url, 'tenant-steady', steadySession);
    steady.start();
  }, 180_000);

  afterAll(async () => {
    await steady?.stop();
    redis?.disconnect();
    await running?.stop();
  });

  it('counts every event of a storm once: each id resent through both ingest processes at once, and across a kill -9 of the consumer where it is a process apart', async () => {
    const session = await openSession('tenant-storm');
    const events = Array.from({ length: EVENTS }, (_, i) => ({
      session_id: session,
      user_id: 'tenant-storm',
      provider: 'resemble',
      event_type: 'tts_characters',
      quantity: 1 + i,
      event_id: randomUUID(),
    }));
    for (const [i, event] of events.entries()) ledger.accept(session, event.event_id, characters(1 + i));
    // Every resend goes to both processes at once: the copies race each other into the topic.
    for (let resend = 0; resend < RESENDS; resend += 1)
      await Promise.all(running.ingests.map((ingest) => sendBatch(ingest, events)));
    if (running.restartConsumer !== null) {
      // Resent while the consumer is down, and again once it is back: its first rounds replay what it
      // had planned, beside copies of the same ids.
      const stopped = running.restartConsumer();
      await Promise.all(running.ingests.map((ingest) => sendBatch(ingest, events)));
      await stopped;
      await Promise.all(running.ingests.map((ingest) => sendBatch(ingest, events)));
    }
    await expectViewsExact(ledger, running.query.url, ['tenant-storm'], settle);
  }, 180_000);

  it('counts an id once when a client sends it under two of its sessions at once (copies in two partitions)', async () => {
    const sessions = [await openSession('tenant-split'), await openSession('tenant-split')];
    const events = Array.from({ length: 100 }, () => ({
      user_id: 'tenant-split',
      provider: 'resemble',
      event_type: 'tts_characters',
      quantity: 5,
      event_id: randomUUID(),
    }));
    for (let resend = 0; resend < 3; resend += 1)
      await Promise.all(
        sessions.map((session, s) =>
          sendBatch(
            running.ingests[s]!,
            events.map((event) => ({ ...event, session_id: session })),
          ),
        ),
      );
    // Which session's copy is stored first is a race: the tenant's total is what must hold.
    await settle(async () => {
      const summary = await call<{ total_cost: string; event_count: number }>(
        running.query.url,
        'GET',
        '/api/costs/summary',
        undefined,
        { 'x-user-id': 'tenant-split' },
      );
      expect(summary.status).toBe(200);
      expect([new Exact(summary.body.total_cost).toFixed(), summary.body.event_count]).toEqual([
        characters(5).times(100).toFixed(),
        100,
      ]);
    });
  }, 120_000);

  it.runIf(mode.redis)(
    'keeps no usage claim in Redis once the rounds are stored, and at most the cap of live entries a call',
    async () => {
      if (redis === null) throw new Error('this mode has no Redis');
      const { claims, all } = await settle(async () => {
        const keys = await redisKeys();
        expect(keys.claims).toBe(0);
        return keys;
      });
      // Thousands of records went through; what Redis keeps is per session and per process, not per event.
      expect({ claims, underPrefix: all < 100 }).toEqual({ claims: 0, underPrefix: true });
      for await (const keys of redis.scanStream({
        match: liveUsageKey(running.redisPrefix!, '*'),
        count: 1_000,
      }) as AsyncIterable<string[]>)
        for (const key of keys) expect(await redis.hlen(key)).toBeLessThanOrEqual(LIVE_USAGE_MAX_ENTRIES);
    },
    90_000,
  );

  it("answered the steady tenant's every request with a success throughout, and every tenant's views are exact", async () => {
    // Where most cases do not apply (the embedded mode has no claims) the steady tenant has run only briefly.
    await eventually(async () => expect(steady.requests.length).toBeGreaterThan(10), 30_000, 200);
    await steady.stop();
    ledger.addTotal(steady.sessionId, steady.total);
    await expectViewsExact(ledger, running.query.url, ['tenant-steady'], settle);
    expect(steady.requests.filter((request) => request.status < 200 || request.status >= 300)).toEqual([]);
  }, 120_000);
});
