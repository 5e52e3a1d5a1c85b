import { randomUUID } from 'node:crypto';
import type { Consumer, Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { ensureTopics, topicSpecs } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { isolate, testConfig } from '../support/harness.ts';

describe('the real Kafka broker', () => {
  const isolation = isolate('kafka');
  const config = testConfig(isolation);
  const kafka = createKafka(config.kafka!, createLogger('warn'));
  const topics = topicSpecs(isolation.suffix);
  let producer: Producer;
  let consumer: Consumer;

  beforeAll(async () => {
    const admin = kafka.admin();
    await admin.connect();
    await ensureTopics(admin, topics);
    await admin.disconnect();
    producer = kafka.producer({ idempotent: true, maxInFlightRequests: 5 });
    await producer.connect();
    consumer = kafka.consumer({ groupId: config.kafka!.groupId });
  });

  afterAll(async () => {
    await Promise.allSettled([producer.disconnect(), consumer.disconnect()]);
  });

  it('creates every topic of the shared definition with its partition count', async () => {
    const admin = kafka.admin();
    await admin.connect();
    const metadata = await admin.fetchTopicMetadata({ topics: Object.values(topics).map((t) => t.name) });
    await admin.disconnect();
    const partitions = Object.fromEntries(metadata.topics.map((t) => [t.name, t.partitions.length]));
    expect(partitions).toEqual(Object.fromEntries(Object.values(topics).map((t) => [t.name, t.partitions])));
  });

  it('delivers records sent with acks=-1 by the idempotent producer to a consumer group, in key order', async () => {
    const key = randomUUID();
    const values = Array.from({ length: 20 }, (_, i) => `record-${i}`);
    const acks = await producer.send({
      topic: topics.sessions.name,
      acks: -1,
      messages: values.map((value) => ({ key, value })),
    });
    expect(acks[0]?.errorCode).toBe(0);

    const received: string[] = [];
    await consumer.connect();
    await consumer.subscribe({ topic: topics.sessions.name, fromBeginning: true });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`received only ${received.length} records`)), 30_000);
      void consumer.run({
        eachMessage: async ({ message }) => {
          if (message.key?.toString() !== key) return;
          received.push(message.value!.toString());
          if (received.length === values.length) {
            clearTimeout(timer);
            resolve();
          }
        },
      });
    });
    expect(received).toEqual(values);
  });
});
