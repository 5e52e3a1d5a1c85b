import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Config } from '../../services/shared/config.ts';
import { call } from '../support/api.ts';
import { makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { drained } from '../support/drained.ts';
import { eventually, isolate, serviceEnv, testConfig } from '../support/harness.ts';

interface Running {
  readonly ingest: CallmeterProcess;
  readonly query: CallmeterProcess;
  /** Kafka mode: the consumer has stored every record; embedded: a 201 is already stored. */
  readonly settled: () => Promise<void>;
  readonly stop: () => Promise<unknown>;
}

const MODES = [
  {
    name: 'the embedded process',
    start: async (): Promise<Running> => {
      const app = await startCallmeter({ DATA_DIR: isolate('tenant-ids').dataDir, LOG_LEVEL: 'warn' });
      return { ingest: app, query: app, settled: async () => undefined, stop: () => app.stop() };
    },
  },
  {
    name: 'ingest and consumer apart over real Kafka and Redis',
    start: async (): Promise<Running> => {
      const isolation = isolate('tenant-ids-kafka');
      const config: Config = testConfig(isolation);
      const ingest = await startCallmeter(
        serviceEnv(isolation, { SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/ingest` }),
      );
      const query = await startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer,query' }));
      return {
        ingest,
        query,
        settled: () => drained(config, 'usage', 30_000),
        stop: () => Promise.allSettled([ingest.stop(), query.stop()]),
      };
    },
  },
] as const;

describe.each(MODES)('an event_id deduplicates within its user_id only, on $name', (mode) => {
  let running: Running;
  const sessions: Record<'a' | 'b', string> = { a: '', b: '' };
  const post = (path: string, body: unknown) => call<unknown>(running.ingest.url, 'POST', path, body);
  const summary = async (user: string) =>
    (
      await call<{ event_count: number; total_cost: string }>(
        running.query.url,
        'GET',
        '/api/costs/summary',
        undefined,
        { 'x-user-id': user },
      )
    ).body;
  const event = (tenant: 'a' | 'b', eventId: string, quantity: number) =>
    makeUsageEventBody(sessions[tenant], { user_id: `tenant-${tenant}`, event_id: eventId, quantity });

  beforeAll(async () => {
    running = await mode.start();
    for (const tenant of ['a', 'b'] as const) {
      sessions[tenant] = (
        await call<{ id: string }>(running.ingest.url, 'POST', '/api/sessions/', {
          room_name: `room-${tenant}-${randomUUID()}`,
          user_id: `tenant-${tenant}`,
        })
      ).body.id;
    }
  });

  afterAll(async () => {
    await running?.stop();
  });

  it("stores a tenant's event although another tenant sent the same event_id first, and still counts each tenant's resends once", async () => {
    const [shared, inBatch, repeated] = [randomUUID(), randomUUID(), randomUUID()];
    // Tenant b sends tenant a's event id first; both are 201 and both are stored.
    expect((await post('/api/usage/events', event('b', shared, 7))).status).toBe(201);
    expect((await post('/api/usage/events', event('a', shared, 5))).status).toBe(201);
    // One batch: the same id under two tenants is two events; under one tenant, a duplicate.
    const batch = await post('/api/usage/events/batch', [
      event('a', inBatch, 11),
      event('b', inBatch, 13),
      event('a', repeated, 17),
      event('a', repeated, 17),
    ]);
    expect((batch.body as { status: string }[]).map((item) => item.status)).toEqual([
      'accepted',
      'accepted',
      'accepted',
      'duplicate',
    ]);
    // Resends of every event, by each tenant: a client retry, counted once.
    const resent = await post('/api/usage/events/batch', [
      event('a', shared, 5),
      event('b', shared, 7),
      event('a', inBatch, 11),
      event('b', inBatch, 13),
      event('a', repeated, 17),
    ]);
    expect((resent.body as { status: string }[]).every((item) => item.status === 'accepted')).toBe(true);

    // 5 + 11 + 17 characters for a, 7 + 13 for b, at 0.00004 a character.
    const expected = {
      'tenant-a': { event_count: 3, total_cost: '0.00132' },
      'tenant-b': { event_count: 2, total_cost: '0.0008' },
    };
    await eventually(async () => {
      for (const [user, totals] of Object.entries(expected)) expect(await summary(user), user).toMatchObject(totals);
    }, 30_000);
    await running.settled();
    for (const [user, totals] of Object.entries(expected)) expect(await summary(user), user).toMatchObject(totals);
    const breakdown = await call<{ events: { id: string; quantity: string }[]; total_cost: string }>(
      running.query.url,
      'GET',
      `/api/sessions/${sessions.a}/cost-breakdown`,
    );
    expect(breakdown.body.events.map((listed) => [listed.id, listed.quantity]).sort()).toEqual(
      [
        [shared, '5'],
        [inBatch, '11'],
        [repeated, '17'],
      ].sort(),
    );
    expect(breakdown.body.total_cost).toBe('0.00132');
  });
});
