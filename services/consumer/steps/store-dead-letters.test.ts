import { describe, expect, it } from 'vitest';
import { fakeClickHouse } from '../../../test/support/fake-clickhouse.ts';
import { makeSessionEnvelope } from '../../../test/support/records.ts';
import { makeMember, makeMessage } from '../../../test/support/rounds.ts';
import type { BatchingProducer } from '../../shared/kafka/batching-producer.ts';
import type { EncodedRecord } from '../../shared/kafka/encoded-record.ts';
import { createLogger } from '../../shared/logger.ts';
import { storeDeadLetters } from './store-dead-letters.ts';

const log = createLogger('silent');

function fakeProducer() {
  const published: { topic: string; records: readonly EncodedRecord[] }[] = [];
  const producer = {
    publish: async (topic: string, records: readonly EncodedRecord[]) => void published.push({ topic, records }),
  } as unknown as BatchingProducer;
  return { producer, published };
}

describe('storeDeadLetters', () => {
  it("stores each batch's dead letters under its own token, with their place, kind and value as they came", async () => {
    const { ch, inserts } = fakeClickHouse();
    const session = makeSessionEnvelope();
    const first = makeMember([makeMessage('not json', 4), makeMessage(session, 5)], { partition: 1 });
    const second = makeMember([makeMessage('{}', 9)], { partition: 2 });
    await storeDeadLetters({ ch, log, topic: null }, [
      { member: first, message: first.messages[0]!, reason: 'record value is not JSON' },
      { member: second, message: second.messages[0]!, reason: 'invalid envelope' },
      { member: first, message: first.messages[1]!, reason: 'refused', kind: 'session' },
    ]);
    expect(inserts.map(({ table, token }) => [table, token])).toEqual([
      ['dead_letters', `${first.token}:deadLetters`],
      ['dead_letters', `${second.token}:deadLetters`],
    ]);
    expect(inserts[0]!.rows).toEqual([
      {
        kind: 'unknown',
        reason: 'record value is not JSON',
        topic: 'usage',
        kafka_partition: 1,
        kafka_offset: '4',
        record: 'not json',
      },
      {
        kind: 'session',
        reason: 'refused',
        topic: 'usage',
        kafka_partition: 1,
        kafka_offset: '5',
        record: JSON.stringify(session),
      },
    ]);
  });

  it("takes a record's kind from its headers first, then from what it decoded to, and goes under a batch's dead-letter token", async () => {
    const { ch, inserts } = fakeClickHouse();
    const journal = makeMember([makeMessage(makeSessionEnvelope(), 0, { headers: false })], {
      topic: 'journal',
      partition: -1,
      token: 'journal:j:0-1',
      deadLetterToken: 'journal:j:0-1:dead',
    });
    const kafka = makeMember([makeMessage(makeSessionEnvelope(), 0)], { partition: 3 });
    await storeDeadLetters({ ch, log, topic: null }, [
      { member: journal, message: journal.messages[0]!, reason: 'refused', kind: 'agent' },
      { member: kafka, message: kafka.messages[0]!, reason: 'refused', kind: 'agent' },
    ]);
    expect(inserts.map(({ token, rows }) => [token, rows[0]!.kind])).toEqual([
      ['journal:j:0-1:dead:deadLetters', 'agent'],
      [`${kafka.token}:deadLetters`, 'session'],
    ]);
  });

  it('publishes them to the dead-letter topic too when there is one, with where they came from', async () => {
    const { ch } = fakeClickHouse();
    const { producer, published } = fakeProducer();
    const member = makeMember([makeMessage('not json', 12)], { partition: 0 });
    await storeDeadLetters({ ch, log, topic: { producer, topic: 'dlq' } }, [
      { member, message: member.messages[0]!, reason: 'record value is not JSON' },
    ]);
    expect(published).toEqual([
      {
        topic: 'dlq',
        records: [
          {
            key: '',
            value: Buffer.from('not json'),
            headers: { reason: 'record value is not JSON', topic: 'usage', partition: '0', offset: '12' },
          },
        ],
      },
    ]);
  });

  it('stores and publishes nothing when every record was stored', async () => {
    const { ch, inserts } = fakeClickHouse();
    const { producer, published } = fakeProducer();
    await storeDeadLetters({ ch, log, topic: { producer, topic: 'dlq' } }, []);
    expect([inserts, published]).toEqual([[], []]);
  });
});
