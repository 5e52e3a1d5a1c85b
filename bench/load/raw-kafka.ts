import { createIdempotentProducer } from '../../services/shared/kafka/batching-producer.ts';
import { createKafka } from '../../services/shared/kafka/client.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { encodeRecord } from '../../services/domain/records/index.ts';
import { usageEnvelope } from './usage-records.ts';

/**
 * The baseline of ingest_batch_events_per_s: the records ingest would publish for the same batches,
 * sent with kafkajs sendBatch (idempotent, acks=-1) straight to the broker by as many concurrent
 * senders as the HTTP load has clients, for the same time. Prints one JSON line.
 */
const { brokers, topic, durationMs, connections, batchSize } = JSON.parse(process.argv[2]!) as {
  brokers: string;
  topic: string;
  durationMs: number;
  connections: number;
  batchSize: number;
};
const kafka = createKafka(
  { brokers: [brokers], clientId: 'bench-raw', groupId: 'bench-raw', topicSuffix: '' },
  createLogger('error'),
);
const producer = createIdempotentProducer(kafka);
await producer.connect();
const session = { id: '00000000-0000-4000-8000-0000000000aa', user_id: 'bench-raw' };
let events = 0,
  counter = 0;
const started = performance.now();
const deadline = started + durationMs;
// kafkajs serialises the sends of one idempotent producer: concurrent senders share it, as ingest's requests do.
await Promise.all(
  Array.from({ length: connections }, async () => {
    while (performance.now() < deadline) {
      const messages = Array.from({ length: batchSize }, () => {
        const record = encodeRecord(usageEnvelope(session, counter++));
        return { key: record.key, value: record.value, headers: record.headers };
      });
      await producer.sendBatch({ acks: -1, topicMessages: [{ topic, messages }] });
      events += batchSize;
    }
  }),
);
const elapsed = performance.now() - started;
await producer.disconnect();
process.stdout.write(
  `${JSON.stringify({ events, elapsed_ms: Math.round(elapsed), events_per_s: Math.round((events / elapsed) * 1000) })}\n`,
);
