import type { Kafka, Message, Producer, TopicMessages } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { MicroBatcher } from '../micro-batcher.ts';
import type { EncodedRecord } from '../records/envelope.ts';

/** The idempotent producer every service publishes with: acks=-1, one request in flight, bounded retries. */
export function createIdempotentProducer(kafka: Kafka): Producer {
  return kafka.producer({
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
    // Bounded, so that a broker outage becomes a 503 within seconds instead of a hung request;
    // a client retry of the same record id is deduplicated downstream.
    retry: { retries: 2, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
}

interface Outgoing {
  readonly topic: string;
  readonly record: EncodedRecord;
}

/**
 * Shares one sendBatch among all concurrent publishers (kafkajs has no linger). A publish resolves
 * only after the broker acknowledged (acks=-1) the send that carried its records; if the broker
 * did not, it rejects with DEPENDENCY_UNAVAILABLE (503, Retry-After) and nothing is acknowledged.
 */
export class BatchingProducer {
  private readonly batcher: MicroBatcher<Outgoing>;

  constructor(producer: Producer, log: Logger) {
    this.batcher = new MicroBatcher(async (outgoing) => {
      try {
        await producer.sendBatch({ acks: -1, topicMessages: groupByTopic(outgoing) });
      } catch (error) {
        log.warn({ err: error, records: outgoing.length }, 'kafka_send_failed');
        throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Kafka is unavailable; nothing was stored. Retry the request.', {
          cause: error,
          headers: { 'Retry-After': '1' },
        });
      }
    });
  }

  publish(topic: string, records: readonly EncodedRecord[]): Promise<void> {
    return this.batcher.submit(records.map((record) => ({ topic, record })));
  }

  drain(): Promise<void> {
    return this.batcher.drain();
  }
}

function groupByTopic(outgoing: readonly Outgoing[]): TopicMessages[] {
  const byTopic = new Map<string, Message[]>();
  for (const { topic, record } of outgoing) {
    const messages = byTopic.get(topic) ?? [];
    messages.push({ key: record.key, value: record.value, headers: record.headers });
    byTopic.set(topic, messages);
  }
  return [...byTopic].map(([topic, messages]) => ({ topic, messages }));
}
