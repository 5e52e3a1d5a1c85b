import type { Infrastructure } from '../shared/infrastructure.ts';
import { BatchingProducer, createIdempotentProducer } from '../shared/kafka/batching-producer.ts';
import type { Shutdown } from '../shared/lifecycle.ts';
import type { Logger } from '../shared/logger.ts';
import { startBatchRunner } from './batch-runner.ts';
import { createRecordWriter, type RecordWriter } from './record-writer.ts';

export interface ConsumerDeps {
  readonly infra: Infrastructure;
  readonly log: Logger;
  readonly shutdown: Shutdown;
  readonly groupId: string;
}

/**
 * Builds the record writer and, with Kafka, the batch runner that feeds it. Without Kafka the
 * writer is returned for the composition root to hand to ingest as its direct path.
 */
export async function startConsumer({ infra, log, shutdown, groupId }: ConsumerDeps): Promise<RecordWriter> {
  const consumerLog = log.child({ component: 'consumer' });
  if (infra.kafka === null) return createRecordWriter({ ch: infra.clickhouse, log: consumerLog, deadLetterTopic: null });

  const producer = createIdempotentProducer(infra.kafka.client);
  await producer.connect();
  shutdown.add('dead-letter-producer', () => producer.disconnect());
  const deadLetters = new BatchingProducer(producer, consumerLog);
  const writer = createRecordWriter({ ch: infra.clickhouse, log: consumerLog, deadLetterTopic: { producer: deadLetters, topic: infra.kafka.topics.dlq.name } });
  const runner = await startBatchRunner({
    kafka: infra.kafka.client,
    groupId,
    topics: [infra.kafka.topics.sessions.name],
    handle: writer.handleBatch,
    log: consumerLog,
  });
  shutdown.add('consumer', runner.stop);
  return writer;
}
