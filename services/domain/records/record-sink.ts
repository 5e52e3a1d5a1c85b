import type { BatchingProducer } from '../../shared/kafka/batching-producer.ts';
import type { TopicKey, TopicSpec } from '../../shared/kafka/topics.ts';
import { AppError } from '../../shared/errors.ts';
import { encodeRecord, type Envelope, type RecordKind } from './envelope.ts';
import type { RecordJournal } from './journal.ts';

/**
 * Where ingest puts records. `publish` resolves only when the records are durable: acknowledged by
 * the broker (acks=-1), or in the embedded mode synced to the journal's disk.
 */
export interface RecordSink {
  publish(envelopes: readonly Envelope[]): Promise<void>;
}

const TOPIC_OF_KIND: { [K in RecordKind]: TopicKey } = {
  session: 'sessions',
  telephony_number: 'sessions',
  usage: 'usage',
  // An agent's records share its key with its telephony_number records: one partition, in order.
  agent: 'sessions',
  transcript: 'sessions',
  rate: 'sessions',
  api_key: 'sessions',
  audit: 'sessions',
  period: 'sessions',
  budget: 'sessions',
  tenant_settings: 'sessions',
  webhook_endpoint: 'sessions',
};

export function kafkaRecordSink(producer: BatchingProducer, topics: Readonly<Record<TopicKey, TopicSpec>>): RecordSink {
  return {
    publish: async (envelopes) => {
      const byTopic = new Map<string, Envelope[]>();
      for (const envelope of envelopes) {
        const topic = topics[TOPIC_OF_KIND[envelope.kind]].name;
        const list = byTopic.get(topic);
        if (list === undefined) byTopic.set(topic, [envelope]);
        else list.push(envelope);
      }
      // whole: a request's records are acknowledged all or none, never in parts.
      await Promise.all(
        [...byTopic].map(([topic, list]) => producer.publish(topic, list.map(encodeRecord), { whole: true })),
      );
    },
  };
}

/**
 * Records the embedded journal may hold unstored (appended, not yet in ClickHouse): at about 1 KB each,
 * tens of megabytes on disk. Past it a publish is a 503 with Retry-After at once, instead of a backlog
 * that grows without bound while ClickHouse is slow or refuses inserts (every read waits for it).
 */
export const JOURNAL_BACKLOG_LIMIT = 50_000;

/**
 * The embedded mode's path: records appended to the journal and answered once synced to disk; the
 * writer stores them in rounds behind it (`consumer/journal-runner.ts`), as the consumer does behind
 * Kafka. A record ClickHouse refuses for what it holds then becomes a dead letter, as through Kafka.
 */
export function journalRecordSink(
  journal: Pick<RecordJournal, 'append' | 'appended' | 'stored'>,
  { maxBacklog = JOURNAL_BACKLOG_LIMIT } = {},
): RecordSink & { full(): boolean } {
  return {
    /** As many records wait to be stored as the journal may hold: a publish now is refused. */
    full: () => journal.appended() - journal.stored() >= maxBacklog,
    publish: async (envelopes) => {
      const backlog = journal.appended() - journal.stored();
      if (backlog > 0 && backlog + envelopes.length > maxBacklog)
        throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Too many records waiting to be stored, try again', {
          headers: { 'Retry-After': '1' },
        });
      // The value a Kafka record carries (encodeRecord), which the writer decodes the same way.
      const values = envelopes.map((envelope) => JSON.stringify(envelope));
      await journal.append(values, envelopes.map(readerTenant)).catch((error: unknown) => {
        // A disk that refuses the append (full, read-only): nothing was acknowledged, the client retries.
        throw AppError.of('DEPENDENCY_UNAVAILABLE', 'The records could not be written to the journal, try again', {
          headers: { 'Retry-After': '1' },
          cause: error,
        });
      });
    },
  };
}

/**
 * The tenant whose reads must wait for a record: its payload's `user_id`. A record of no tenant (a
 * transcript, a number, an unbound key, its audit) is waited for by every read.
 */
export function readerTenant(envelope: Envelope): string | null {
  const userId = envelope.payload['user_id'];
  return typeof userId === 'string' && userId !== '' ? userId : null;
}
