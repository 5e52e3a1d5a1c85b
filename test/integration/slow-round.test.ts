import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startBatchRunner, type BatchRunner } from '../../services/consumer/batch-runner.ts';
import { createRecordWriter } from '../../services/consumer/record-writer.ts';
import { RedisEventClaims } from '../../services/consumer/usage/event-claims.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { BatchingProducer, createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { ensureTopics, topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from '../../services/domain/pricing/index.ts';
import { encodeRecord, makeEnvelope } from '../../services/domain/records/index.ts';
import { MemoryLiveUsage } from '../../services/shared/redis/live-usage.ts';
import { drained } from '../support/drained.ts';
import { eventually, isolate, testConfig } from '../support/harness.ts';
import { makeUsageRecord } from '../support/records.ts';

/** Longer than the consumer's session timeout (10 s): a member that does not heartbeat meanwhile is expelled. */
const STALL_MS = 14_000;

/**
 * A member whose round takes longer than the group's session timeout (an insert queued behind others on a
 * loaded machine) must keep its partitions until that round is stored and committed. Expelled meanwhile,
 * its partitions went to the other members, whose regrouped replays were decided before its insert
 * landed: both inserts kept the events (the same batch token holds their claims), and every event of
 * those partitions was counted twice.
 */
describe('a round slower than the session timeout', () => {
  const isolation = isolate('slow_round');
  const config = testConfig(isolation);
  const log = createLogger('silent');
  const kafka = createKafka(config.kafka!, log);
  const topics = topicSpecs(isolation.suffix);
  const redis = new Redis(config.redis!.url);
  const runners: BatchRunner[] = [];
  let ch: ClickHouse;

  beforeAll(async () => {
    ch = await createClickHouse(config);
    await migrate(ch, log);
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, topics);
    await admin.disconnect();
  });

  afterAll(async () => {
    await Promise.all(runners.map((runner) => runner.stop()));
    await ch.client.close();
    redis.disconnect();
  });

  it('keeps its partitions meanwhile: no other member stores its batches, every event is stored once', async () => {
    const card = await loadRateCard(DEFAULT_RATE_CARD_URL);
    const claims = new RedisEventClaims(redis, (key) => `${config.redis!.keyPrefix}usage-claim:${key}`);
    let stalled = false;
    // The first member's first usage insert starts only after the stall, its rows decided before it.
    const slow: ClickHouse = {
      ...ch,
      client: new Proxy(ch.client, {
        get(target, property) {
          const value: unknown = Reflect.get(target, property, target);
          if (property !== 'insert') return typeof value === 'function' ? value.bind(target) : value;
          return async (params: { table: string }) => {
            if (!stalled && params.table.endsWith('usage_events')) {
              stalled = true;
              await new Promise((resolve) => setTimeout(resolve, STALL_MS));
            }
            return target.insert(params as Parameters<typeof target.insert>[0]);
          };
        },
      }),
    };
    // Each member a writer of its own, as if each were a process of its own.
    const member = async (writes: ClickHouse) => {
      const writer = createRecordWriter({
        ch: writes,
        reads: ch,
        log,
        card,
        claims,
        liveUsage: new MemoryLiveUsage(),
        deadLetterTopic: null,
      });
      runners.push(
        await startBatchRunner({
          kafka,
          groupId: config.kafka!.groupId,
          topics: [topics.usage.name],
          gathered: [topics.usage.name],
          partitions: topics.usage.partitions,
          handle: writer.handleRound,
          log,
        }),
      );
    };
    await member(slow);

    const producer = createIdempotentProducer(kafka);
    await producer.connect();
    const publisher = new BatchingProducer(producer, log);
    // Many calls, so that the first member's round holds batches of most partitions.
    const records = Array.from({ length: 240 }, (_, i) =>
      makeUsageRecord({ session_id: `00000000-0000-4000-8000-${String(i % 24).padStart(12, '0')}` }),
    );
    await publisher.publish(
      topics.usage.name,
      records.map((r) => encodeRecord(makeEnvelope('usage', r.session_id, r, new Date(), new Date()))),
    );
    await eventually(async () => expect(stalled).toBe(true), 30_000, 100);
    // Two more members join while the first one's round is held up: the group rebalances.
    await Promise.all([member(ch), member(ch)]);
    await drained(config, 'usage', 90_000);
    await producer.disconnect();
    // What the slow insert may still add lands by now.
    await new Promise((resolve) => setTimeout(resolve, STALL_MS));
    const [row] = await (
      await ch.client.query({
        query: `SELECT count() AS n, uniqExact(id) AS ids FROM ${ch.database}.usage_events`,
        format: 'JSONEachRow',
      })
    ).json<{ n: string; ids: string }>();
    expect(row).toEqual({ n: String(records.length), ids: String(records.length) });
  }, 180_000);
});
