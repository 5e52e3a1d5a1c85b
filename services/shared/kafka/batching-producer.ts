import type { Kafka, Message, Producer, TopicMessages } from 'kafkajs';
import { Partitioners } from 'kafkajs';
import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { MicroBatcher } from '../micro-batcher.ts';
import type { EncodedRecord } from './encoded-record.ts';
import { chunkByBytes, isRecordTooLarge, outgoingBytes, type Outgoing } from './record-size.ts';

/**
 * Bytes of records in one sendBatch. The broker refuses a partition's batch over message.max.bytes
 * (1,048,588 by default, the local broker and docker-compose keep it) and kafkajs never splits a
 * batch, so a larger flush would fail every time; this stays under it with room for the framing.
 */
export const DEFAULT_MAX_BATCH_BYTES = 1_000_000;

export interface BatchingProducerOptions {
  readonly maxBatchBytes?: number;
  /**
   * Makes a fresh producer after a failed send (see `send`). Without it a failed send's producer is
   * used again: only for tests of batching, never where an acknowledgement means the record is kept.
   */
  readonly renew?: () => Producer;
}

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

/**
 * Shares one sendBatch among all concurrent publishers (kafkajs has no linger). A publish resolves
 * only after the broker acknowledged (acks=-1) the sends that carried its records; if the broker
 * did not, it rejects with DEPENDENCY_UNAVAILABLE (503, Retry-After) and nothing is acknowledged.
 * Publishes join one flush only up to maxBatchBytes; one publish larger than that is sent alone,
 * in several sendBatch calls in order (not atomic: for dead letters), or in one when `whole`. A record the broker refuses as too large rejects its own
 * publish with PAYLOAD_TOO_LARGE (413): retrying it could never succeed.
 */
type WholeOrNot = Outgoing & { readonly whole: boolean };

export class BatchingProducer {
  private readonly batcher: MicroBatcher<WholeOrNot>;
  private producer: Producer;
  /** A send failed and no fresh producer could be made yet: this one may not send again. */
  private stale = false;

  constructor(
    producer: Producer,
    private readonly log: Logger,
    { maxBatchBytes = DEFAULT_MAX_BATCH_BYTES, renew }: BatchingProducerOptions = {},
  ) {
    this.producer = producer;
    this.batcher = new MicroBatcher<WholeOrNot>(
      async (outgoing) => {
        // A flush over the cap is one submit alone (the batcher's limit): split it unless it is whole.
        const chunks = outgoing.some((item) => item.whole) ? [outgoing] : chunkByBytes(outgoing, maxBatchBytes);
        for (const chunk of chunks) await this.send(chunk, renew);
      },
      { maxWeight: maxBatchBytes, weigh: outgoingBytes },
    );
  }

  /**
   * `whole`: the records are stored all or none, so they are never split across sendBatch calls; a
   * publish larger than maxBatchBytes goes out alone in one, and if the broker refuses it as too
   * large it is a 413 with nothing stored. A request answered 503 after a first part was stored
   * would be retried whole, and its events without a client event_id counted twice.
   */
  publish(
    topic: string,
    records: readonly EncodedRecord[],
    { whole = false }: { whole?: boolean } = {},
  ): Promise<void> {
    return this.batcher.submit(records.map((record) => ({ topic, record, whole })));
  }

  drain(): Promise<void> {
    return this.batcher.drain();
  }

  /** Sends what is waiting, then disconnects the producer in use (the first one may have been renewed). */
  async close(): Promise<void> {
    await this.batcher.drain();
    await this.producer.disconnect();
  }

  private async send(outgoing: readonly Outgoing[], renew: (() => Producer) | undefined): Promise<void> {
    if (this.stale && renew !== undefined && !(await this.renewProducer(renew)))
      throw unavailable(new Error('no fresh Kafka producer could be connected after a failed send'));
    try {
      await this.producer.sendBatch({ acks: -1, topicMessages: groupByTopic(outgoing) });
    } catch (error) {
      if (isRecordTooLarge(error)) {
        this.log.warn({ err: error, records: outgoing.length }, 'kafka_record_too_large');
        throw AppError.of('PAYLOAD_TOO_LARGE', 'The record is larger than the broker accepts; nothing was stored.', {
          cause: error,
        });
      }
      this.log.warn({ err: error, records: outgoing.length }, 'kafka_send_failed');
      // A failed send is never followed by another from the same producer. kafkajs takes back the
      // sequence numbers of a request that failed, though the broker may have appended it (its
      // answer lost or timed out): the producer's next batch of as many records for that partition
      // would carry the same numbers, and the broker acknowledges it as a duplicate without
      // appending it, an acknowledged record lost. Batches of another size fail with
      // OUT_OF_ORDER_SEQUENCE_NUMBER instead, for good. A new producer id has no such history.
      // The new one is made before the next send, not here: this request's 503 waits for no connect.
      // The requests still get their 503 and retry; retried records are deduplicated downstream by id.
      if (renew !== undefined) this.stale = true;
      throw unavailable(error);
    }
  }

  /** Connects a fresh producer in place of the one in use; false (and still stale) when it cannot. */
  private async renewProducer(renew: () => Producer): Promise<boolean> {
    const stale = this.producer;
    const fresh = renew();
    try {
      await fresh.connect();
    } catch (error) {
      this.log.warn({ err: error }, 'kafka_producer_renew_failed');
      await fresh.disconnect().catch(() => undefined);
      return false;
    }
    this.producer = fresh;
    this.stale = false;
    this.log.warn({}, 'kafka_producer_renewed');
    await stale.disconnect().catch(() => undefined);
    return true;
  }
}

function unavailable(cause: unknown): AppError {
  return AppError.of('DEPENDENCY_UNAVAILABLE', 'Kafka is unavailable; nothing was stored. Retry the request.', {
    cause,
    headers: { 'Retry-After': '1' },
  });
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
