import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { Redis } from 'ioredis';
import { Kafka, logLevel } from 'kafkajs';
import { topicSpecs } from '../../services/shared/kafka/topics.ts';
import { RedisLiveUsage } from '../../services/shared/redis/live-usage.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalKafka } from '../../infra/local/kafka.ts';
import { LocalRedis } from '../../infra/local/redis.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually } from '../support/harness.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';
import { AlertDriver } from './alert-driver.ts';
import { arrangeBudgetAlerts, expectBudgetAlerts, firstAlertEmitted } from './budget-alerts.ts';
import { createDriverSessions, inPhase, LoadDriver } from './load-driver.ts';
import { expectStoredExactlyOnce } from './stored-exactly-once.ts';

const USER = 'fault-tenant';
const SESSIONS = 64;
/**
 * The alert driver's spend per second, and its budgets: the tenant's 10 % is reached about 6 s into the
 * load, as the consumer kills begin, its amount at about 60 s; the call's cap at 44 s (its half at 22 s).
 */
const ALERT_RATE = new Exact('0.05');
const ALERT_AMOUNT = ALERT_RATE.times(60);
const ALERT_CAP = ALERT_RATE.times(44);
let redisUrl = '';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The fault suite: real Kafka broker, real redis-server and the ClickHouse engine, an ingest process
 * and a consumer+query process, and a load driver whose events have known costs. Faults are
 * injected one after another while the load runs; afterwards every acknowledged event must be stored
 * exactly once, no refused one at all, and every cost view must equal the expected Decimal sums.
 * Beside the load, one call's usage crosses budget thresholds while the consumer that evaluates them is
 * killed and the webhook receiver is down: every crossing must reach the receiver, fired once, signed,
 * with the exact spend stored up to it. It runs its own broker and Redis, because it stops and restarts them.
 */
describe('callmeter under faults', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'callmeter-faults-'));
  let kafka: LocalKafka;
  let redis: LocalRedis;
  let ingest: CallmeterProcess;
  let consumer: CallmeterProcess;
  let env: Record<string, string>;
  const receiver = new WebhookReceiver();
  const startIngest = () =>
    startCallmeter({ ...env, SERVICES: 'ingest', DATA_DIR: path.join(folder, 'ingest') }, 120_000);
  const startConsumer = () =>
    startCallmeter(
      { ...env, SERVICES: 'consumer,query', DATA_DIR: path.join(folder, 'consumer'), FAULT_INJECTION: '1' },
      120_000,
    );

  beforeAll(async () => {
    kafka = await LocalKafka.create(path.join(folder, 'kafka'));
    redis = await LocalRedis.create(path.join(folder, 'redis'));
    await Promise.all([kafka.start(), redis.start()]);
    redisUrl = redis.url;
    await receiver.listen();
    env = {
      KAFKA_BROKERS: kafka.brokers,
      REDIS_URL: redis.url,
      KAFKA_GROUP_ID: 'faults',
      LOG_LEVEL: 'error',
      SHUTDOWN_TIMEOUT_MS: '5000',
      // A receiver on loopback, polled often, retried from a short first pause up.
      WEBHOOK_ALLOW_PRIVATE: '1',
      WEBHOOK_POLL_MS: '200',
      WEBHOOK_RETRY_BASE_MS: '200',
      WEBHOOK_TIMEOUT_MS: '2000',
    };
    [ingest, consumer] = await Promise.all([startIngest(), startConsumer()]);
  }, 240_000);

  afterAll(async () => {
    // A process that died on its own is the first thing to read when the suite fails.
    for (const [name, process_] of [
      ['ingest', ingest],
      ['consumer', consumer],
    ] as const) {
      const child = process_?.child;
      if (child !== undefined && (child.exitCode !== null || child.signalCode !== null)) {
        process.stdout.write(
          `\n${name} process ended by itself (code ${child.exitCode}, signal ${child.signalCode}); its last output:\n${process_!.output().slice(-6_000)}\n`,
        );
      }
    }
    await Promise.allSettled([ingest?.stop('SIGKILL'), consumer?.stop('SIGKILL')]);
    await Promise.allSettled([kafka?.stop(), redis?.stop(), receiver.close()]);
  });

  it('stores every acknowledged event exactly once and fires every budget alert once through kills, broker, Redis and ClickHouse outages', async () => {
    const sessions = await createDriverSessions(ingest.url, USER, SESSIONS);
    const alerts = await arrangeBudgetAlerts(ingest.url, consumer.url, receiver, {
      amount: ALERT_AMOUNT,
      cap: ALERT_CAP,
    });
    const driver = new LoadDriver(() => ingest.url, sessions);
    const alertDriver = new AlertDriver(
      () => ingest.url,
      alerts.target,
      ALERT_RATE,
      () => driver.phase,
    );
    const startedAt = Date.now();
    driver.start();
    alertDriver.start();
    const phase = (name: string, fault: () => Promise<unknown>) => inPhase(driver, name, fault);

    await phase('none', () => sleep(2_000));
    // The receiver refuses connections from the first kill until ingest is killed: the crossings before
    // the amount's are emitted while it is down, and retried by the outbox until it is back.
    const down = { from: Date.now(), to: 0 };
    await receiver.close();
    await phase('consumer kill -9 (3 times)', async () => {
      for (let kill = 0; kill < 3; kill += 1) {
        // The first lands as the consumer evaluates the budgets, just after it emitted its first alert.
        await (kill === 0 ? firstAlertEmitted(consumer.url, alerts) : sleep(1_500));
        await consumer.stop('SIGKILL');
        consumer = await startConsumer();
      }
    });
    await phase('rebalances (a member joins, holds partitions, leaves; 3 times)', async () => {
      for (let round = 0; round < 3; round += 1) {
        const leave = await intrude(kafka.brokers, 'faults');
        await sleep(3_000);
        await leave();
        await sleep(2_000);
      }
    });
    // Claims live while their round is unstored: inserts refused for a while hold rounds (and their
    // claims) in flight, and Redis then loses them before the rounds are stored.
    await phase('Redis loses every usage claim of the rounds in flight', async () => {
      const client = new Redis(redisUrl);
      try {
        // A consumer still rejoining its group after the rebalances holds no round yet: the fault is
        // made again until rounds are held while it lasts (three tries at most).
        let deleted = 0;
        let attempt = 0;
        for (; attempt < 3 && deleted === 0; attempt += 1) {
          const fault = await call(consumer.url, 'POST', '/_faults/clickhouse-inserts?seconds=5');
          expect(fault.status).toBe(200);
          const until = Date.now() + 4_500;
          await sleep(1_000);
          while (deleted === 0 && Date.now() < until) {
            for await (const keys of client.scanStream({
              match: 'callmeter:usage-claim:*',
              count: 1_000,
            }) as AsyncIterable<string[]>)
              if (keys.length > 0) deleted += await client.unlink(...keys);
            if (deleted === 0) await sleep(250);
          }
          if (deleted === 0) await sleep(Math.max(0, until + 500 - Date.now()));
        }
        process.stdout.write(`usage claims deleted: ${deleted} (fault made ${attempt} time(s))\n`);
        expect(deleted).toBeGreaterThan(0);
        await sleep(3_000);
      } finally {
        client.disconnect();
      }
    });
    await receiver.listen(receiver.port);
    down.to = Date.now();
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
    await Promise.all([driver.stop(), alertDriver.stop(ALERT_AMOUNT)]);

    await expectStoredExactlyOnce({
      url: consumer.url,
      user: USER,
      sessions,
      driver,
      diagnose: liveCounters,
      totals: async () => (await call(consumer.url, 'GET', `/_faults/stored-totals?user_id=${USER}`)).body,
    });
    await expectBudgetAlerts({
      consumerUrl: consumer.url,
      receiver,
      setup: alerts,
      driver: alertDriver,
      startedAt,
      down,
    });
  }, 600_000);
});

/**
 * A member that joins the consumer group, takes its share of the partitions, stores nothing and
 * leaves: the group rebalances twice, and the batches and rounds the consumer had in hand are
 * revoked, some of them planned and not committed, to be replayed (or regrouped) when they come back.
 */
async function intrude(brokers: string, groupId: string): Promise<() => Promise<void>> {
  const client = new Kafka({ clientId: 'fault-intruder', brokers: [brokers], logLevel: logLevel.NOTHING });
  const member = client.consumer({ groupId, sessionTimeout: 10_000, heartbeatInterval: 1_000 });
  await member.connect();
  const topics = topicSpecs('');
  for (const topic of [topics.sessions.name, topics.usage.name]) await member.subscribe({ topic, fromBeginning: true });
  let joined = false;
  member.on(member.events.GROUP_JOIN, () => (joined = true));
  await member.run({
    autoCommit: false,
    eachBatchAutoResolve: false,
    // Holds what it was given without storing or committing it: it only takes part in the rebalances.
    eachBatch: async ({ batch, pause }) => {
      if (!batch.isEmpty()) pause();
    },
  });
  await eventually(async () => expect(joined).toBe(true), 30_000);
  return () => member.disconnect();
}

/**
 * What the live counters in Redis hold for a session beside the events the breakdown listed: tells
 * a rollup that counts too much from counters whose events the stored-id lookup did not find.
 */
async function liveCounters(sessionId: string, listed: readonly { id: string }[]) {
  const client = new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await client.connect();
    const entries = await new RedisLiveUsage(client, 'callmeter:').read(sessionId);
    const ids = new Set(listed.map((event) => event.id));
    const unlisted = entries.filter((entry) => !ids.has(entry.event_id));
    return {
      live_entries: entries.length,
      live_unlisted: unlisted.length,
      live_unlisted_cost: unlisted.reduce((sum, entry) => sum.plus(entry.cost), new Exact(0)).toFixed(),
    };
  } finally {
    client.disconnect();
  }
}
