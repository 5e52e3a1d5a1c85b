import type { Config } from '../shared/config.ts';
import type { Route } from '../shared/http/define-route.ts';
import type { Infrastructure } from '../shared/infrastructure.ts';
import { BatchingProducer, createIdempotentProducer } from '../shared/kafka/batching-producer.ts';
import type { Shutdown } from '../shared/lifecycle.ts';
import type { Logger } from '../shared/logger.ts';
import { kafkaRecordSink, type RecordSink } from '../shared/records/record-sink.ts';
import { HistoryBackedSessionStore } from './history/history-backed-session-store.ts';
import { SessionHistory } from './history/session-history.ts';
import { sessionRoutes } from './routes/session-routes.ts';
import { createSessionService } from './session-service.ts';
import { MemorySessionStore } from './sessions/memory-session-store.ts';
import { RedisSessionStore } from './sessions/redis-session-store.ts';

export interface IngestDeps {
  readonly config: Config;
  readonly infra: Infrastructure;
  readonly log: Logger;
  readonly shutdown: Shutdown;
  /** The embedded mode's direct path to the writer; required when there is no Kafka. */
  readonly directSink: RecordSink | null;
}

/** Builds the ingest routes over live state (Redis, else memory) and the record sink (Kafka, else direct). */
export async function startIngest({ config, infra, log, shutdown, directSink }: IngestDeps): Promise<Route[]> {
  const ingestLog = log.child({ component: 'ingest' });
  const sink = infra.kafka === null ? directSink : await kafkaSink(infra.kafka, ingestLog, shutdown);
  if (sink === null) throw new Error('ingest needs KAFKA_BROKERS, or the consumer in the same process (embedded mode)');
  const live = infra.redis === null || config.redis === null ? new MemorySessionStore() : new RedisSessionStore(infra.redis, config.redis.keyPrefix);
  const store = new HistoryBackedSessionStore(live, new SessionHistory(infra.clickhouse));
  return sessionRoutes(createSessionService({ store, sink, log: ingestLog }));
}

async function kafkaSink(kafka: NonNullable<Infrastructure['kafka']>, log: Logger, shutdown: Shutdown): Promise<RecordSink> {
  const producer = createIdempotentProducer(kafka.client);
  await producer.connect();
  const batching = new BatchingProducer(producer, log);
  shutdown.add('ingest-producer', async () => {
    await batching.drain();
    await producer.disconnect();
  });
  return kafkaRecordSink(batching, kafka.topics);
}
