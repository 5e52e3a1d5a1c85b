import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalKafka } from '../../infra/local/kafka.ts';
import { LocalRedis } from '../../infra/local/redis.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually } from '../support/harness.ts';
import { LoadDriver, type DriverSession, type SentEvent } from './load-driver.ts';

const USER = 'fault-tenant';
const SESSIONS = 64;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The fault suite: real Kafka broker, real redis-server and the ClickHouse engine, an ingest process
 * and a consumer+query process, and a load driver whose events have known costs. Faults are
 * injected one after another while the load runs; afterwards every acknowledged event must be stored
 * exactly once, no refused one at all, and every cost view must equal the expected Decimal sums.
 * It runs its own broker and Redis, because it stops and restarts them.
 */
describe('callmeter under faults', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'callmeter-faults-'));
  let kafka: LocalKafka;
  let redis: LocalRedis;
  let ingest: CallmeterProcess;
  let consumer: CallmeterProcess;
  let env: Record<string, string>;
  const startIngest = () => startCallmeter({ ...env, SERVICES: 'ingest', DATA_DIR: path.join(folder, 'ingest') }, 120_000);
  const startConsumer = () => startCallmeter({ ...env, SERVICES: 'consumer,query', DATA_DIR: path.join(folder, 'consumer'), FAULT_INJECTION: '1' }, 120_000);

  beforeAll(async () => {
    kafka = await LocalKafka.create(path.join(folder, 'kafka'));
    redis = await LocalRedis.create(path.join(folder, 'redis'));
    await Promise.all([kafka.start(), redis.start()]);
    env = { KAFKA_BROKERS: kafka.brokers, REDIS_URL: redis.url, KAFKA_GROUP_ID: 'faults', LOG_LEVEL: 'error', SHUTDOWN_TIMEOUT_MS: '5000' };
    [ingest, consumer] = await Promise.all([startIngest(), startConsumer()]);
  }, 240_000);

  afterAll(async () => {
    await Promise.allSettled([ingest?.stop('SIGKILL'), consumer?.stop('SIGKILL')]);
    await Promise.allSettled([kafka?.stop(), redis?.stop()]);
  });

  it('stores every acknowledged event exactly once through kills, broker, Redis and ClickHouse outages', async () => {
    const sessions: DriverSession[] = [];
    for (let i = 0; i < SESSIONS; i += 1) {
      const agent_id = i % 6 === 5 ? null : `agent-${i % 5}`;
      const created = await call<{ id: string }>(ingest.url, 'POST', '/api/sessions/', { room_name: `fault-room-${i}`, user_id: USER, agent_id });
      expect(created.status).toBe(201);
      sessions.push({ id: created.body.id, user_id: USER, agent_id });
    }
    const driver = new LoadDriver(() => ingest.url, sessions);
    driver.start();
    const phase = async (name: string, fault: () => Promise<unknown>) => {
      driver.phase = name;
      await fault();
      await sleep(2_000);
    };

    await phase('none', () => sleep(2_000));
    await phase('consumer kill -9 (3 times)', async () => {
      for (let kill = 0; kill < 3; kill += 1) {
        await sleep(1_500);
        await consumer.stop('SIGKILL');
        consumer = await startConsumer();
      }
    });
    await phase('ingest kill -9', async () => {
      await ingest.stop('SIGKILL');
      await sleep(1_000);
      ingest = await startIngest();
    });
    await phase('Kafka broker stop and restart', async () => {
      await kafka.stop();
      await sleep(3_000);
      await kafka.start();
    });
    await phase('Redis stop and restart', async () => {
      await redis.stop();
      await sleep(3_000);
      await redis.start();
    });
    await phase('ClickHouse inserts fail for 10 s', async () => {
      const fault = await call(consumer.url, 'POST', '/_faults/clickhouse-inserts?seconds=10');
      expect(fault.status).toBe(200);
      await sleep(10_000);
    });
    await driver.stop();

    const events = [...driver.events.values()];
    process.stdout.write(`retried requests: ${JSON.stringify(Object.fromEntries(driver.retries))}\n`);
    const acknowledged = events.filter((event) => event.acknowledged);
    expect(events.filter((event) => !event.acknowledged && !event.refused)).toEqual([]);
    expect(events.filter((event) => event.invalid !== event.refused)).toEqual([]);
    const expectedTotal = sumOf(acknowledged);

    const get = async <T>(route: string) => (await call<T>(consumer.url, 'GET', route, undefined, { 'x-user-id': USER })).body;
    await eventually(async () => expect((await get<{ event_count: number }>('/api/costs/summary')).event_count).toBe(acknowledged.length), 180_000, 500);
    await sleep(3_000);

    const stored = new Map<string, number>();
    let sessionTotals = new Exact(0);
    for (const session of sessions) {
      const breakdown = await get<{ total_cost: string; events: { id: string }[]; events_truncated: boolean }>(`/api/sessions/${session.id}/cost-breakdown`);
      expect(breakdown.events_truncated).toBe(false);
      sessionTotals = sessionTotals.plus(breakdown.total_cost);
      for (const { id } of breakdown.events) stored.set(id, (stored.get(id) ?? 0) + 1);
    }
    const rows = report(events, stored);
    process.stdout.write(`\n${rows}\n`);

    for (const event of events) expect(stored.get(event.id) ?? 0, `${event.phase}: ${event.id} acknowledged=${event.acknowledged}`).toBe(event.acknowledged ? 1 : 0);
    const summary = await get<{ total_cost: string; event_count: number }>('/api/costs/summary');
    expect(summary).toMatchObject({ total_cost: expectedTotal.toFixed(), event_count: acknowledged.length });
    const timeline = await get<{ total_cost: string }[]>('/api/costs/timeline?period=daily');
    expect(timeline.reduce((sum, point) => sum.plus(point.total_cost), new Exact(0)).toFixed()).toBe(expectedTotal.toFixed());
    const agents = await get<{ total_cost: string }[]>('/api/costs/by-agent');
    const withoutAgent = sumOf(acknowledged.filter((event) => sessions[event.session]!.agent_id === null));
    expect(agents.reduce((sum, agent) => sum.plus(agent.total_cost), withoutAgent).toFixed()).toBe(expectedTotal.toFixed());
    expect(sessionTotals.toFixed()).toBe(expectedTotal.toFixed());
  }, 600_000);
});

function sumOf(events: readonly SentEvent[]): Exact {
  return events.reduce((sum, event) => sum.plus(event.cost), new Exact(0));
}

/** The table the suite prints: per fault, events sent, acknowledged, stored, lost and duplicated. */
function report(events: readonly SentEvent[], stored: ReadonlyMap<string, number>): string {
  const phases = [...new Set(events.map((event) => event.phase))];
  const lines = ['| fault | events sent | acknowledged | refused (invalid) | stored | lost | duplicated |', '|---|---|---|---|---|---|---|'];
  for (const phase of [...phases, 'all']) {
    const own = events.filter((event) => phase === 'all' || event.phase === phase);
    const count = (predicate: (event: SentEvent) => boolean) => own.filter(predicate).length;
    lines.push(
      `| ${phase} | ${own.length} | ${count((e) => e.acknowledged)} | ${count((e) => e.refused)} | ${count((e) => (stored.get(e.id) ?? 0) > 0)} | ${count((e) => e.acknowledged && !stored.has(e.id))} | ${count((e) => (stored.get(e.id) ?? 0) > 1)} |`,
    );
  }
  return lines.join('\n');
}
