import type { Producer, ProducerBatch } from 'kafkajs';
import { describe, expect, it } from 'vitest';
import type { AppError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import type { EncodedRecord } from './encoded-record.ts';
import { BatchingProducer } from './batching-producer.ts';
import { outgoingBytes } from './record-size.ts';

const log = createLogger('silent');
const MAX = 10_000;

const makeRecord = (overrides: Partial<EncodedRecord> = {}): EncodedRecord => ({
  key: 'k',
  value: 'x'.repeat(1_000),
  headers: { kind: 'session' },
  ...overrides,
});

/** A broker that refuses any request over MAX bytes, as a real one refuses a batch over message.max.bytes. */
function fakeBroker(refuse: (bytes: number) => Error | null = (bytes) => (bytes > MAX ? tooLarge() : null)) {
  const sent: string[][] = [];
  const producer = {
    sendBatch: async ({ topicMessages = [] }: ProducerBatch) => {
      const records = topicMessages.flatMap(({ topic, messages }) =>
        messages.map((m) => ({ topic, record: m as EncodedRecord })),
      );
      const error = refuse(records.reduce((sum, item) => sum + outgoingBytes(item), 0));
      if (error !== null) throw error;
      sent.push(records.map(({ record }) => String(record.value).slice(0, 7)));
      return [];
    },
  };
  return { sent, producer: producer as unknown as Producer };
}

function tooLarge(): Error {
  const answer = Object.assign(
    new Error('The request included a message larger than the max message size the server will accept'),
    { type: 'MESSAGE_TOO_LARGE' },
  );
  return Object.assign(new Error(answer.message, { cause: answer }), { name: 'KafkaJSNonRetriableError' });
}

describe('BatchingProducer', () => {
  it('splits concurrent publishes over the byte cap into several sends, and acknowledges every one', async () => {
    const { sent, producer } = fakeBroker();
    const publisher = new BatchingProducer(producer, log, { maxBatchBytes: MAX });
    const publishes = Array.from({ length: 25 }, (_, i) =>
      publisher.publish('t', [makeRecord({ value: `r${String(i).padStart(6, '0')}${'x'.repeat(1_000)}` })]),
    );
    await expect(Promise.all(publishes)).resolves.toHaveLength(25);
    expect(sent.length).toBeGreaterThan(2);
    expect(sent.flat()).toEqual(Array.from({ length: 25 }, (_, i) => `r${String(i).padStart(6, '0')}`));
  });

  it('sends one publish larger than the cap in order, in sends under the cap', async () => {
    const { sent, producer } = fakeBroker();
    const publisher = new BatchingProducer(producer, log, { maxBatchBytes: MAX });
    const records = Array.from({ length: 30 }, (_, i) =>
      makeRecord({ value: `r${String(i).padStart(6, '0')}${'x'.repeat(1_000)}` }),
    );
    await publisher.publish('t', records);
    expect(sent.length).toBeGreaterThan(2);
    expect(sent.flat()).toEqual(records.map((r) => String(r.value).slice(0, 7)));
  });

  it('sends a whole publish larger than the cap in one send: all of it, or a 413 and none of it', async () => {
    const { sent, producer } = fakeBroker((bytes) => (bytes > 3 * MAX ? tooLarge() : null));
    const publisher = new BatchingProducer(producer, log, { maxBatchBytes: MAX });
    await publisher.publish(
      't',
      Array.from({ length: 20 }, () => makeRecord()),
      { whole: true },
    );
    expect(sent.map((records) => records.length)).toEqual([20]);
    await expect(
      publisher.publish(
        't',
        Array.from({ length: 40 }, () => makeRecord()),
        { whole: true },
      ),
    ).rejects.toMatchObject({ code: 'PAYLOAD_TOO_LARGE' });
    expect(sent.map((records) => records.length)).toEqual([20]);
  });

  it('renews the producer when the broker lost its sequence state, so sends work again after the 503', async () => {
    const outOfOrder = () =>
      Object.assign(new Error('Out of order sequence number'), {
        name: 'KafkaJSNonRetriableError',
        cause: Object.assign(new Error('Out of order sequence number'), { type: 'OUT_OF_ORDER_SEQUENCE_NUMBER' }),
      });
    const stale = fakeBroker(() => outOfOrder());
    const fresh = fakeBroker();
    let renewals = 0;
    let disconnected = 0;
    const stuck = Object.assign(stale.producer, { disconnect: async () => void (disconnected += 1) });
    const publisher = new BatchingProducer(stuck, log, {
      maxBatchBytes: MAX,
      renew: () => ((renewals += 1), Object.assign(fresh.producer, { connect: async () => undefined })),
    });
    await expect(publisher.publish('t', [makeRecord()])).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect([renewals, disconnected]).toEqual([1, 1]);
    await expect(publisher.publish('t', [makeRecord()])).resolves.toBeUndefined();
    expect(fresh.sent.flat()).toHaveLength(1);
    const plain = new BatchingProducer(fakeBroker(() => new Error('connection refused')).producer, log, {
      renew: () => ((renewals += 1), fresh.producer),
    });
    await expect(plain.publish('t', [makeRecord()])).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(renewals).toBe(1);
  });

  it('answers a record the broker refuses as too large with 413, alone, and goes on', async () => {
    const { sent, producer } = fakeBroker();
    const publisher = new BatchingProducer(producer, log, { maxBatchBytes: MAX });
    const [small, huge, after] = await Promise.allSettled([
      publisher.publish('t', [makeRecord({ value: 'small' })]),
      publisher.publish('t', [makeRecord({ value: 'x'.repeat(MAX) })]),
      publisher.publish('t', [makeRecord({ value: 'after' })]),
    ]);
    expect([small.status, after.status]).toEqual(['fulfilled', 'fulfilled']);
    const error = (huge as PromiseRejectedResult).reason as AppError;
    expect([error.code, error.headers]).toEqual(['PAYLOAD_TOO_LARGE', {}]);
    expect(sent.flat()).toEqual(['small', 'after']);
  });

  it('answers any other refusal with 503 and Retry-After', async () => {
    const { producer } = fakeBroker(() => new Error('Connection error: ECONNREFUSED'));
    const publisher = new BatchingProducer(producer, log, { maxBatchBytes: MAX });
    const error = (await publisher.publish('t', [makeRecord()]).catch((e: unknown) => e)) as AppError;
    expect([error.code, error.headers]).toEqual(['DEPENDENCY_UNAVAILABLE', { 'Retry-After': '1' }]);
  });
});
