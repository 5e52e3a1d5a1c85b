import { randomUUID } from 'node:crypto';
import type { BatchingProducer } from '../kafka/batching-producer.ts';
import type { TopicKey, TopicSpec } from '../kafka/topics.ts';
import { refusalReason, refusedForData } from '../clickhouse/refused-rows.ts';
import { AppError } from '../errors.ts';
import { MicroBatcher, QueueFullError } from '../micro-batcher.ts';
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
  rate: 'sessions',
  api_key: 'sessions',
  audit: 'sessions',
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
 * Records the embedded flush queue holds at most (waiting and in flight): at about 1 KB each, tens of
 * megabytes. Past it a publish is a 503 with Retry-After at once, instead of a queue that grows
 * without bound while ClickHouse is slow.
 */
export const DIRECT_QUEUE_LIMIT = 50_000;

/**
 * The embedded mode's path: no broker, records go straight to the writer, micro-batched because
 * one insert into the embedded engine costs milliseconds however small it is. Nothing replays a
 * flush in this mode, so each flush has a fresh deduplication token. A flush that ClickHouse refuses
 * for what its records hold is split by request until each request at fault fails alone (a 422: it
 * stored nothing), and every other request of that flush is stored and answered as usual.
 */
export function directRecordSink(
  store: (envelopes: Envelope[], token: string) => Promise<void>,
  { maxQueued = DIRECT_QUEUE_LIMIT } = {},
): RecordSink & { drain(): Promise<void> } {
  const batcher = new MicroBatcher<Envelope>((envelopes) => store(envelopes, `direct:${randomUUID()}`), {
    maxQueuedItems: maxQueued,
    blamesItems: refusedForData,
  });
  return {
    publish: (envelopes) =>
      batcher.submit(envelopes).catch((error: unknown) => {
        throw toAppError(error);
      }),
    drain: () => batcher.drain(),
  };
}

function toAppError(error: unknown): unknown {
  if (error instanceof QueueFullError)
    return AppError.of('DEPENDENCY_UNAVAILABLE', 'Too many records waiting to be stored, try again', {
      headers: { 'Retry-After': '1' },
      cause: error,
    });
  if (!refusedForData(error)) return error;
  const msg = `Value error, ${refusalReason(error).replace(/: .*$/s, '')}: a value of this request cannot be stored`;
  return AppError.validation([{ type: 'value_error', loc: ['body'], msg, input: null, ctx: { error: {} } }]);
}
