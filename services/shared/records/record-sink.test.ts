import { describe, expect, it } from 'vitest';
import type { AppError } from '../errors.ts';
import { directRecordSink } from './record-sink.ts';
import type { Envelope } from './envelope.ts';

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

const tooBig = Object.assign(new Error('Decimal value is too big'), { code: '69', type: 'ARGUMENT_OUT_OF_BOUND' });

describe('directRecordSink (the embedded path)', () => {
  it('answers the request ClickHouse refuses for its records with a 422 and stores every other request of its flush', async () => {
    const stored: string[] = [];
    const sink = directRecordSink(async (envelopes) => {
      if (envelopes.some((e) => e.key === 'poison')) throw tooBig;
      stored.push(...envelopes.map((e) => e.key));
    });
    const results = await Promise.allSettled([
      sink.publish([envelope('a1'), envelope('a2')]),
      sink.publish([envelope('b'), envelope('poison')]),
      sink.publish([envelope('c')]),
    ]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    const refused = (results[1] as PromiseRejectedResult).reason as AppError;
    expect([refused.code, (refused.detail as readonly { msg: string }[])[0]?.msg]).toEqual([
      'VALIDATION',
      'Value error, ClickHouse refused the record (ARGUMENT_OUT_OF_BOUND): a value of this request cannot be stored',
    ]);
    // The refused request stored nothing, not even its good record: a 4xx means not stored.
    expect(stored.sort()).toEqual(['a1', 'a2', 'c']);
  });

  it('passes an outage on as it is, failing every request of the flush', async () => {
    const sink = directRecordSink(async () => {
      throw new Error('socket hang up');
    });
    const results = await Promise.allSettled([sink.publish([envelope('a')]), sink.publish([envelope('b')])]);
    expect(results.map((r) => (r as PromiseRejectedResult).reason.message)).toEqual([
      'socket hang up',
      'socket hang up',
    ]);
  });

  it('refuses a publish with 503 and Retry-After while the flush queue is full', async () => {
    let release = () => {};
    const sink = directRecordSink(() => new Promise<void>((resolve) => (release = resolve)), { maxQueued: 2 });
    const first = sink.publish([envelope('a'), envelope('b')]);
    const refused = await sink.publish([envelope('c')]).catch((error: unknown) => error as AppError);
    expect([refused?.code, refused?.headers]).toEqual(['DEPENDENCY_UNAVAILABLE', { 'Retry-After': '1' }]);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    await first;
  });
});
