import { randomUUID } from 'node:crypto';
import type { Kafka, KafkaMessage } from 'kafkajs';
import { expect } from 'vitest';
import { eventually } from './harness.ts';

/**
 * Every record of a topic, read from the beginning by a consumer group of its own, once the
 * topic's end offsets are all read (bounded). Returns them in partition and offset order.
 */
export async function readTopic(
  kafka: Kafka,
  topic: string,
  timeoutMs = 30_000,
): Promise<(KafkaMessage & { partition: number })[]> {
  const admin = kafka.admin();
  const consumer = kafka.consumer({ groupId: `test-reader-${randomUUID()}` });
  const read: (KafkaMessage & { partition: number })[] = [];
  await Promise.all([admin.connect(), consumer.connect()]);
  try {
    const ends = await admin.fetchTopicOffsets(topic);
    await consumer.subscribe({ topic, fromBeginning: true });
    await consumer.run({ eachMessage: async ({ partition, message }) => void read.push({ ...message, partition }) });
    await eventually(async () => {
      for (const end of ends) {
        const last = read
          .filter((m) => m.partition === end.partition)
          .reduce((max, m) => Math.max(max, Number(m.offset) + 1), Number(end.low));
        expect(last).toBe(Number(end.high));
      }
    }, timeoutMs);
  } finally {
    await Promise.allSettled([consumer.disconnect(), admin.disconnect()]);
  }
  return read.sort((a, b) => a.partition - b.partition || Number(a.offset) - Number(b.offset));
}
