import { randomUUID } from 'node:crypto';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatchRunner } from '../../services/consumer/batch-runner.ts';
import { StoreWatch } from '../../services/consumer/store-watch.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from '../../services/domain/pricing/index.ts';
import { createRecordWriter } from '../../services/consumer/record-writer.ts';
import { RedisEventClaims } from '../../services/consumer/usage/event-claims.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { BatchingProducer, createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { ensureTopics, topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { encodeRecord, makeEnvelope } from '../../services/domain/records/index.ts';
import type { UsageRecord } from '../../services/domain/records/index.ts';
import { LIVE_USAGE_MAX_ENTRIES, RedisLiveUsage } from '../../services/shared/redis/live-usage.ts';
import { drained } from '../support/drained.ts';
import { isolate, testConfig } from '../support/harness.ts';
import { expectedTotals, expectSessionsCountedOnce, storedTotals } from '../support/rollups.ts';

function makeUsageRecord(overrides: Partial<UsageRecord> = {}): UsageRecord {
  const now = new Date().toISOString();
  return {
    event_id: randomUUID(),
    session_id: randomUUID(),
    user_id: 'tenant-1',
    agent_id: 'agent-1',
    provider: 'deepgram',
    event_type: 'stt_minutes',
    model: null,
    quantity: '1',
    input_tokens: null,
    output_tokens: null,
    reported_unit_cost: null,
    reported_total_cost: null,
    occurred_at: now,
    received_at: now,
    ...overrides,
  };
}

describe('a ClickHouse outage under the consumer', () => {
  const isolation = isolate('ch_outage');
  const config = testConfig(isolation);
  const log = createLogger('silent');
  const kafka = createKafka(config.kafka!, log);
  const topics = topicSpecs(isolation.suffix);
  const redis = new Redis(config.redis!.url);
  let ch: ClickHouse;
  let stop: () => Promise<void> = async () => undefined;

  beforeAll(async () => {
    ch = await createClickHouse(config);
    await migrate(ch, log);
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, topics);
    await admin.disconnect();
  });

  afterAll(async () => {
    await stop();
    await ch.client.close();
    redis.disconnect();
  });

  it('pauses while inserts fail (an outage, not a poison record: nothing dead-lettered), says so on its watch, commits nothing past them, then stores every event once, exactly priced', async () => {
    const sql = async (query: string) =>
      (await (await ch.client.query({ query, format: 'JSONEachRow' })).json<Record<string, string>>())[0]!;
    await ch.client.command({
      query: `ALTER TABLE ${ch.database}.usage_events ADD CONSTRAINT IF NOT EXISTS fault_injected CHECK 0`,
    });

    const liveUsage = new RedisLiveUsage(redis, config.redis!.keyPrefix);
    const claims = new RedisEventClaims(redis, (id) => `${config.redis!.keyPrefix}usage-claim:${id}`);
    const writer = createRecordWriter({
      ch,
      reads: ch,
      log,
      card: await loadRateCard(DEFAULT_RATE_CARD_URL),
      claims,
      liveUsage,
      deadLetterTopic: null,
    });
    const watch = new StoreWatch(2_000);
    stop = (
      await startBatchRunner({
        kafka,
        groupId: config.kafka!.groupId,
        topics: [topics.usage.name],
        gathered: [topics.usage.name],
        partitions: topics.usage.partitions,
        handle: writer.handleRound,
        log,
        watch,
      })
    ).stop;

    const producer = createIdempotentProducer(kafka);
    await producer.connect();
    const publisher = new BatchingProducer(producer, log);
    const sessionId = randomUUID();
    const records = Array.from({ length: 600 }, (_, i) =>
      makeUsageRecord({ session_id: i % 2 ? sessionId : randomUUID(), quantity: String(1 + (i % 7)) }),
    );
    const envelope = (r: UsageRecord) =>
      encodeRecord(
        makeEnvelope(
          'usage',
          r.session_id,
          r,
          new Date(r.occurred_at),
          new Date(r.received_at),
          r.event_id as `${string}-${string}-${string}-${string}-${string}`,
        ),
      );
    await publisher.publish(topics.usage.name, records.map(envelope));
    await publisher.publish(topics.usage.name, records.slice(0, 150).map(envelope));

    await new Promise((resolve) => setTimeout(resolve, 10_000));
    expect(await sql(`SELECT count() AS n FROM ${ch.database}.usage_events`)).toEqual({ n: '0' });
    const admin = kafka.admin();
    await admin.connect();
    const [committed] = await admin.fetchOffsets({ groupId: config.kafka!.groupId, topics: [topics.usage.name] });
    await admin.disconnect();
    const committedTotal = (committed?.partitions ?? []).reduce((sum, p) => sum + Math.max(0, Number(p.offset)), 0);
    expect(committedTotal).toBe(0);
    // What /readyz and /metrics of the consumer report meanwhile.
    expect(watch.stalled()).toMatch(/^stalled: a batch of .+\/\d+ has failed to store for \d+ s/);
    expect(watch.oldestUnstoredAgeMs()).toBeGreaterThan(5_000);
    expect(await watch.registry.metrics()).toMatch(
      /consumer_store_failures_total\{topic="[^"]+",partition="\d+"\} [1-9]/,
    );

    await ch.client.command({
      query: `ALTER TABLE ${ch.database}.usage_events DROP CONSTRAINT IF EXISTS fault_injected`,
    });
    await drained(config, 'usage', 60_000);
    await producer.disconnect();

    const expected = records
      .reduce((sum, r) => sum.plus(new Exact(r.quantity).times('0.0077')), new Exact(0))
      .toFixed();
    expect(
      await sql(`SELECT count() AS n, uniqExact(id) AS ids, sum(cost) AS cost FROM ${ch.database}.usage_events`),
    ).toEqual({ n: '600', ids: '600', cost: expected });
    expect(await storedTotals(ch)).toEqual(expectedTotals(600, expected));
    await expectSessionsCountedOnce(ch);
    expect(await sql(`SELECT count() AS n FROM ${ch.database}.dead_letters`)).toEqual({ n: '0' });
    expect([watch.stalled(), watch.oldestUnstoredAgeMs()]).toEqual([null, 0]);
    // The call's live entries are its newest stored events, at most two generations of the cap, each at its stored cost.
    const live = await liveUsage.read(sessionId);
    expect(live.length).toBeGreaterThan(0);
    expect(live.length).toBeLessThanOrEqual(2 * LIVE_USAGE_MAX_ENTRIES);
    const stored = await sql(
      `SELECT count() AS n, sum(cost) AS cost FROM ${ch.database}.usage_events WHERE session_id = '${sessionId}'
        AND toString(id) IN (${live.map((e) => `'${e.event_id}'`).join(',')})`,
    );
    expect({ n: String(live.length), cost: live.reduce((sum, e) => sum.plus(e.cost), new Exact(0)).toFixed() }).toEqual(
      stored,
    );
  }, 120_000);
});
