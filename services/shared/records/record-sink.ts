import { randomUUID } from 'node:crypto';
import type { BatchingProducer } from '../kafka/batching-producer.ts';
import type { TopicKey, TopicSpec } from '../kafka/topics.ts';
import { MicroBatcher } from '../micro-batcher.ts';
import { encodeRecord, type Envelope, type RecordKind } from './envelope.ts';

/**
 * Where ingest puts records. `publish` resolves only when the records are durable: acknowledged by
 * the broker (acks=-1), or in the embedded mode inserted into ClickHouse.
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
      await Promise.all([...byTopic].map(([topic, list]) => producer.publish(topic, list.map(encodeRecord), { whole: true })));
    },
  };
}

/**
 * The embedded mode's path: no broker, records go straight to the writer, micro-batched because
 * one insert into the embedded engine costs milliseconds however small it is. Nothing replays a
 * flush in this mode, so each flush has a fresh deduplication token.
 */
export function directRecordSink(store: (envelopes: Envelope[], token: string) => Promise<void>): RecordSink & { drain(): Promise<void> } {
  const batcher = new MicroBatcher<Envelope>((envelopes) => store(envelopes, `direct:${randomUUID()}`));
  return { publish: (envelopes) => batcher.submit(envelopes), drain: () => batcher.drain() };
}
