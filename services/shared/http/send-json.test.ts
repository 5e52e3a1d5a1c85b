import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { sendJson, sentUnchanged } from './send-json.ts';

function fakeContext() {
  const headers: Record<string, string> = {};
  const ctx = { status: 0, body: undefined as unknown, set: (name: string, value: string) => (headers[name] = value) };
  return { ctx: ctx as unknown as Context, headers, body: () => ctx.body };
}

/** An answer that counts how often it is turned into JSON. */
function countingAnswer() {
  const answer = { serialized: 0, toJSON: () => ((answer.serialized += 1), { total_cost: '0.1' }) };
  return answer;
}

describe('sendJson', () => {
  it('writes compact JSON as application/json without a charset', () => {
    const sent = fakeContext();
    sendJson(sent.ctx, 200, { a: [1, 'ü'] });
    expect([sent.ctx.status, sent.body(), sent.headers['Content-Type']]).toEqual([
      200,
      '{"a":[1,"ü"]}',
      'application/json',
    ]);
  });

  it('writes the JSON of an answer sent unchanged to many requests once, and of any other answer each time', () => {
    const shared = sentUnchanged(countingAnswer());
    const other = countingAnswer();
    for (let i = 0; i < 3; i += 1) {
      const first = fakeContext();
      sendJson(first.ctx, 200, shared);
      expect(String(first.body())).toBe('{"total_cost":"0.1"}');
      sendJson(fakeContext().ctx, 200, other);
    }
    expect([shared.serialized, other.serialized]).toEqual([1, 3]);
  });
});
