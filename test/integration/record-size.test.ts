import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppError } from '../../services/shared/errors.ts';
import { BatchingProducer, createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { ensureTopics, topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import type { EncodedRecord } from '../../services/shared/kafka/encoded-record.ts';
import { eventually, isolate, testConfig } from '../support/harness.ts';

// The broker's default message.max.bytes: the largest batch it takes for one partition.
const BROKER_LIMIT = 1_048_588;

const makeRecord = (key: string, bytes: number): EncodedRecord => ({
  key,
  value: 'x'.repeat(bytes),
  headers: { kind: 'session' },
});

describe('record sizes against the real broker', () => {
  const isolation = isolate('record-size');
  const config = testConfig(isolation);
  const log = createLogger('silent');
  const kafka = createKafka(config.kafka!, log);
  const topics = topicSpecs(isolation.suffix);
  const admin = kafka.admin();
  const producer = createIdempotentProducer(kafka);
  const publisher = new BatchingProducer(producer, log);

  beforeAll(async () => {
    await admin.connect();
    await ensureTopics(admin, topics);
    await producer.connect();
    // Every partition has its leader before the first publish: on a busy machine the election after
    // creation outlasted the producer's retries, and the first test's sends were refused (a 503).
    await Promise.all([recordsIn(topics.sessions.name), recordsIn(topics.usage.name)]);
  });

  afterAll(async () => {
    await publisher.drain();
    await Promise.allSettled([producer.disconnect(), admin.disconnect()]);
  });

  /** Retried: just after creation the broker can still answer "not the leader" to an offsets request. */
  async function recordsIn(topic: string): Promise<number> {
    const offsets = await eventually(() => admin.fetchTopicOffsets(topic));
    return offsets.reduce((sum, p) => sum + Number(p.high) - Number(p.low), 0);
  }

  it('acknowledges concurrent publishes of one partition that together pass the broker’s limit', async () => {
    const key = randomUUID();
    const count = 24;
    const published = await Promise.allSettled(
      Array.from({ length: count }, () => publisher.publish(topics.sessions.name, [makeRecord(key, 100_000)])),
    );
    expect(published.map((p) => (p.status === 'rejected' ? (p.reason as AppError).code : 'OK'))).toEqual(
      Array(count).fill('OK'),
    );
    expect(count * 100_000).toBeGreaterThan(2 * BROKER_LIMIT);
    expect(await recordsIn(topics.sessions.name)).toBe(count);
  });

  it('acknowledges one publish of one partition larger than the broker’s limit', async () => {
    const key = randomUUID();
    const before = await recordsIn(topics.usage.name);
    await publisher.publish(
      topics.usage.name,
      Array.from({ length: 30 }, () => makeRecord(key, 100_000)),
    );
    expect(await recordsIn(topics.usage.name)).toBe(before + 30);
    // A request's records (whole) are all or none: one send, which the broker refuses whole.
    await expect(
      publisher.publish(
        topics.usage.name,
        Array.from({ length: 30 }, () => makeRecord(key, 100_000)),
        { whole: true },
      ),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(await recordsIn(topics.usage.name)).toBe(before + 30);
  });

  it('refuses a record larger than the broker takes with 413, alone, and goes on publishing', async () => {
    const key = randomUUID();
    const before = await recordsIn(topics.sessions.name);
    const [small, huge, after] = await Promise.allSettled([
      publisher.publish(topics.sessions.name, [makeRecord(key, 1_000)]),
      publisher.publish(topics.sessions.name, [makeRecord(key, BROKER_LIMIT + 1_000)]),
      publisher.publish(topics.sessions.name, [makeRecord(key, 1_000)]),
    ]);
    expect([small.status, after.status]).toEqual(['fulfilled', 'fulfilled']);
    expect(huge.status === 'rejected' && (huge.reason as AppError).code).toBe('PAYLOAD_TOO_LARGE');
    await publisher.publish(topics.sessions.name, [makeRecord(key, 1_000)]);
    expect(await recordsIn(topics.sessions.name)).toBe(before + 3);
  });
});
