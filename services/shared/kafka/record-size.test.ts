import { describe, expect, it } from 'vitest';
import { chunkByBytes, isRecordTooLarge, outgoingBytes, type Outgoing } from './record-size.ts';

const makeOutgoing = (value: string, key = 'k'): Outgoing => ({
  topic: 't',
  record: { key, value, headers: { kind: 'usage' } },
});

describe('record sizes', () => {
  it('counts key, value and headers in bytes (UTF-8), never fewer than they take', () => {
    const ascii = outgoingBytes(makeOutgoing('a'.repeat(100)));
    expect(outgoingBytes(makeOutgoing('é'.repeat(100))) - ascii).toBe(100);
    expect(ascii).toBeGreaterThan(100 + 1 + 'kind'.length + 'usage'.length);
    expect(outgoingBytes({ topic: 't', record: { key: 'k', value: Buffer.alloc(100), headers: {} } })).toBeGreaterThan(
      101,
    );
  });

  it('chunks in order under the cap, with an oversized record as a chunk of its own', () => {
    const small = makeOutgoing('s'.repeat(100));
    const big = makeOutgoing('b'.repeat(1_000));
    const cap = outgoingBytes(small) * 2;
    expect(chunkByBytes([small, small, small, big, small], cap)).toEqual([[small, small], [small], [big], [small]]);
    expect(chunkByBytes([], cap)).toEqual([]);
  });

  it('finds the broker’s too-large answer inside the errors kafkajs wraps it in', () => {
    const answer = Object.assign(new Error('too large'), { type: 'MESSAGE_TOO_LARGE' });
    expect(isRecordTooLarge(new Error('wrapped', { cause: answer }))).toBe(true);
    expect(isRecordTooLarge(Object.assign(new Error('list'), { type: 'RECORD_LIST_TOO_LARGE' }))).toBe(true);
    expect(isRecordTooLarge(Object.assign(new Error('other'), { type: 'NOT_LEADER_FOR_PARTITION' }))).toBe(false);
    expect(isRecordTooLarge('not an error')).toBe(false);
  });
});
