import { expect } from 'vitest';
import type { Config } from '../../services/shared/config.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { topicSpecs, type TopicKey } from '../../services/shared/kafka/topics.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { eventually } from './harness.ts';

/** Waits until the consumer group has committed every record of the topic (bounded). */
export async function drained(config: Config, topicKey: TopicKey, timeoutMs = 30_000): Promise<void> {
  const admin = createKafka(config.kafka!, createLogger('silent')).admin();
  await admin.connect();
  const topic = topicSpecs(config.kafka!.topicSuffix)[topicKey].name;
  try {
    await eventually(async () => {
      const ends = await admin.fetchTopicOffsets(topic);
      const [committed] = await admin.fetchOffsets({ groupId: config.kafka!.groupId, topics: [topic] });
      for (const end of ends) {
        const done = committed?.partitions.find((p) => p.partition === end.partition)?.offset ?? '-1';
        expect(Number(done === '-1' ? 0 : done)).toBe(Number(end.high));
      }
    }, timeoutMs);
  } finally {
    await admin.disconnect();
  }
}
