import { describe, expect, it } from 'vitest';
import type { AppError } from '../../shared/errors.ts';
import type { Envelope } from './envelope.ts';
import { journalRecordSink } from './record-sink.ts';

function envelope(key: string): Envelope {
  return {
    schema_version: 1,
    id: key,
    kind: 'usage',
    key,
    occurred_at: '2026-11-24T00:00:00.000Z',
    received_at: '2026-11-24T00:00:00.000Z',
    payload: {},
  };
}

/** The journal's port: appends land at once, `stored` is what the test says. */
function fakeJournal(stored = 0) {
  const values: string[] = [];
  return {
    values,
    stored: () => stored,
    appended: () => values.length,
    append: async (more: readonly string[]) => void values.push(...more),
  };
}

describe('journalRecordSink (the embedded path)', () => {
  it("appends a request's records in order, each as the JSON value a Kafka record carries", async () => {
    const journal = fakeJournal();
    const sink = journalRecordSink(journal);
    await sink.publish([envelope('a'), envelope('b')]);
    await sink.publish([envelope('c')]);
    expect(journal.values.map((value) => (JSON.parse(value) as Envelope).key)).toEqual(['a', 'b', 'c']);
    expect(JSON.parse(journal.values[0]!)).toEqual(envelope('a'));
  });

  it('refuses a publish with 503 and Retry-After while the unstored backlog would pass its limit', async () => {
    const journal = fakeJournal();
    const sink = journalRecordSink(journal, { maxBacklog: 3 });
    await sink.publish([envelope('a'), envelope('b')]);
    const refused = await sink.publish([envelope('c'), envelope('d')]).catch((error: unknown) => error as AppError);
    expect([refused?.code, refused?.headers]).toEqual(['DEPENDENCY_UNAVAILABLE', { 'Retry-After': '1' }]);
    // One record still fits, and nothing of the refused request was appended.
    await sink.publish([envelope('e')]);
    expect(journal.values).toHaveLength(3);
  });

  it('takes a request larger than the limit when nothing waits, rather than refusing it for ever', async () => {
    const journal = fakeJournal();
    await journalRecordSink(journal, { maxBacklog: 2 }).publish([envelope('a'), envelope('b'), envelope('c')]);
    expect(journal.values).toHaveLength(3);
  });

  it('answers 503 with Retry-After when the disk refuses the append', async () => {
    const journal = {
      ...fakeJournal(),
      append: async () => Promise.reject(new Error('ENOSPC: no space left on device')),
    };
    const refused = await journalRecordSink(journal)
      .publish([envelope('a')])
      .catch((error: unknown) => error as AppError);
    expect([refused?.code, refused?.headers]).toEqual(['DEPENDENCY_UNAVAILABLE', { 'Retry-After': '1' }]);
  });
});
