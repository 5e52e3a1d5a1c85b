import type { Infrastructure } from '../shared/infrastructure.ts';
import { BatchingProducer, createIdempotentProducer } from '../shared/kafka/batching-producer.ts';
import type { Shutdown } from '../shared/lifecycle.ts';
import type { Logger } from '../shared/logger.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import { startBatchRunner } from './batch-runner.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from './pricing/load-rate-card.ts';
import { RedisEventClaims } from './usage/event-claims.ts';
import { createRecordWriter, type RecordWriter } from './record-writer.ts';

export interface ConsumerDeps {
  readonly infra: Infrastructure;
  readonly log: Logger;
  readonly shutdown: Shutdown;
  readonly groupId: string;
  /** null: the card shipped in infra/rate-card/rate-card.json. */
  readonly rateCardPath: string | null;
  readonly redisKeyPrefix: string;
  readonly liveUsage: LiveUsageStore;
}

/**
 * Builds the record writer and, with Kafka, the batch runner that feeds it. Without Kafka the
 * writer is returned for the composition root to hand to ingest as its direct path.
 */
export async function startConsumer({ infra, log, shutdown, groupId, rateCardPath, redisKeyPrefix, liveUsage }: ConsumerDeps): Promise<RecordWriter> {
  const consumerLog = log.child({ component: 'consumer' });
  const card = await loadRateCard(rateCardPath ?? DEFAULT_RATE_CARD_URL);
  if (infra.kafka === null) return createRecordWriter({ ch: infra.clickhouse, log: consumerLog, card, claims: null, liveUsage, deadLetterTopic: null });
  if (infra.redis === null) throw new Error('the consumer needs REDIS_URL with KAFKA_BROKERS: usage event claims live in Redis');
  const redis = infra.redis;
  const claims = new RedisEventClaims(redis, (eventId) => `${redisKeyPrefix}usage-claim:${eventId}`);

  const producer = createIdempotentProducer(infra.kafka.client);
  await producer.connect();
  shutdown.add('dead-letter-producer', () => producer.disconnect());
  const deadLetters = new BatchingProducer(producer, consumerLog);
  const writer = createRecordWriter({ ch: infra.clickhouse, log: consumerLog, card, claims, liveUsage, deadLetterTopic: { producer: deadLetters, topic: infra.kafka.topics.dlq.name } });
  const runner = await startBatchRunner({
    kafka: infra.kafka.client,
    groupId,
    topics: [infra.kafka.topics.sessions.name, infra.kafka.topics.usage.name],
    handle: writer.handleBatch,
    log: consumerLog,
  });
  shutdown.add('consumer', runner.stop);
  return writer;
}
