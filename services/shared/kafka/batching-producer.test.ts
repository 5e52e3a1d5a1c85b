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

  it('never sends again with a producer whose send failed: a fresh one takes over, and until one connects every publish is a 503', async () => {
    const failed = fakeBroker(() => new Error('Connection error: answer lost'));
    let disconnected = 0;
    const first = Object.assign(failed.producer, { disconnect: async () => void (disconnected += 1) });
    const fresh = fakeBroker();
    let connectable = false;
    let renewals = 0;
    const renew = () =>
      Object.assign(fakeBroker().producer, fresh.producer, {
        connect: async () => {
          renewals += 1;
          if (!connectable) throw new Error('Connection error: ECONNREFUSED');
        },
        disconnect: async () => undefined,
      });
    const publisher = new BatchingProducer(first, log, { maxBatchBytes: MAX, renew });
    await expect(publisher.publish('t', [makeRecord()])).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    await expect(publisher.publish('t', [makeRecord()])).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect([renewals, disconnected, fresh.sent.length]).toEqual([1, 0, 0]);
    connectable = true;
    await expect(publisher.publish('t', [makeRecord({ value: 'renewed' })])).resolves.toBeUndefined();
    expect([renewals, disconnected, fresh.sent]).toEqual([2, 1, [['renewed']]]);
  });

  it('keeps its producer after a record too large: the broker appended nothing of that request', async () => {
    const { sent, producer } = fakeBroker();
    let renewals = 0;
    const publisher = new BatchingProducer(producer, log, {
      maxBatchBytes: MAX,
      renew: () => ((renewals += 1), producer),
    });
    await expect(publisher.publish('t', [makeRecord({ value: 'x'.repeat(MAX) })])).rejects.toMatchObject({
      code: 'PAYLOAD_TOO_LARGE',
    });
    await publisher.publish('t', [makeRecord({ value: 'after' })]);
    expect([renewals, sent]).toEqual([0, [['after']]]);
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
