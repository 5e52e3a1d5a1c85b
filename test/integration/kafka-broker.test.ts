import { randomUUID } from 'node:crypto';
import net from 'node:net';
import { Kafka, logLevel, type Consumer, type ISocketFactory, type Producer } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BatchingProducer, createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
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

  it('stores a publish sent after one whose answer was lost, though it has as many records for the same partition', async () => {
    // The broker appends the first publish and its answer never arrives: kafkajs then takes back the
    // sequence numbers it used, and a producer that kept them would send the next batch of one record
    // with the first one's numbers, which the broker acknowledges as a duplicate without appending it.
    let answersLost = false;
    const lossy: ISocketFactory = ({ host, port, onConnect }) => {
      const socket = net.connect({ host, port }, onConnect);
      const emit = socket.emit.bind(socket);
      socket.emit = ((event: string, ...args: unknown[]) => {
        if (event === 'data' && answersLost) return (socket.destroy(new Error('answer lost')), true);
        return emit(event, ...args);
      }) as typeof socket.emit;
      return socket;
    };
    const client = new Kafka({
      clientId: `lossy-${isolation.suffix}`,
      brokers: [...config.kafka!.brokers],
      logLevel: logLevel.NOTHING,
      socketFactory: lossy,
      retry: { retries: 1, initialRetryTime: 50, maxRetryTime: 100 },
      connectionTimeout: 1_000,
    });
    const first = createIdempotentProducer(client);
    await first.connect();
    const publisher = new BatchingProducer(first, createLogger('silent'), {
      renew: () => createIdempotentProducer(client),
    });
    const admin = kafka.admin();
    await admin.connect();
    const topic = topics.usage.name;
    const key = randomUUID();
    const stored = async () => (await admin.fetchTopicOffsets(topic)).reduce((sum, { high }) => sum + Number(high), 0);
    const before = await stored();

    answersLost = true;
    await expect(publisher.publish(topic, [{ key, value: 'answer lost', headers: {} }])).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
    });
    answersLost = false;
    expect(await stored()).toBe(before + 1);
    await publisher.publish(topic, [{ key, value: 'the next one', headers: {} }]);
    expect(await stored()).toBe(before + 2);

    await Promise.allSettled([publisher.close(), admin.disconnect()]);
  });
});
