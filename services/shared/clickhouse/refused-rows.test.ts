import { describe, expect, it } from 'vitest';
import { refusedForData, storeIsolating } from './refused-rows.ts';

/** A ClickHouse error as @clickhouse/client throws it: code and type beside the message. */
function clickhouseError(code: string, type: string, message: string): Error {
  return Object.assign(new Error(message), { code, type });
}

const tooBig = clickhouseError('69', 'ARGUMENT_OUT_OF_BOUND', 'Decimal value is too big: 26 digits were read');

/** An insert port that refuses every part holding a poisoned item, and records what it stored under which token. */
function fakeInsert(poisoned: ReadonlySet<number>, outage: { on: boolean } = { on: false }) {
  const stored = new Map<string, number[]>();
  const attempt = async (part: readonly number[], token: string) => {
    if (outage.on) throw new Error('connect ECONNREFUSED 127.0.0.1:8123');
    if (part.some((item) => poisoned.has(item))) throw tooBig;
    if (!stored.has(token)) stored.set(token, [...part]);
  };
  return { attempt, stored };
}

describe('refusedForData', () => {
  it('blames the rows for parse, conversion and decimal errors and for too many partitions in one insert, nothing else', () => {
    expect(refusedForData(tooBig)).toBe(true);
    expect(refusedForData(clickhouseError('27', 'CANNOT_PARSE_INPUT_ASSERTION_FAILED', 'Cannot parse input'))).toBe(
      true,
    );
    expect(
      refusedForData(
        clickhouseError('252', 'TOO_MANY_PARTS', 'Too many partitions for single INSERT block (more than 100)'),
      ),
    ).toBe(true);
    // The same code while merges lag behind is the server's state: it passes.
    expect(
      refusedForData(
        clickhouseError('252', 'TOO_MANY_PARTS', 'Too many parts (300 with average size of 1 MiB) in table'),
      ),
    ).toBe(false);
    // The fault suite's refusal (a constraint no row satisfies) must stay an outage that pauses.
    expect(
      refusedForData(clickhouseError('469', 'VIOLATED_CONSTRAINT', 'Constraint `fault_injected` is violated')),
    ).toBe(false);
    expect(refusedForData(new Error('socket hang up'))).toBe(false);
    expect(refusedForData('69')).toBe(false);
  });
});

describe('storeIsolating', () => {
  it('stores everything in one insert when nothing is refused', async () => {
    const { attempt, stored } = fakeInsert(new Set());
    expect(await storeIsolating([1, 2, 3], 't', attempt)).toEqual([]);
    expect([...stored]).toEqual([['t', [1, 2, 3]]]);
  });

  it('returns each poisoned item alone with the reason and stores every other item exactly once', async () => {
    const items = Array.from({ length: 37 }, (_, i) => i);
    const { attempt, stored } = fakeInsert(new Set([3, 30]));
    const refused = await storeIsolating(items, 'batch', attempt);
    expect(refused.map((r) => r.item)).toEqual([3, 30]);
    expect(refused[0]!.reason).toMatch(
      /^ClickHouse refused the record \(ARGUMENT_OUT_OF_BOUND\): Decimal value is too big/,
    );
    expect([...stored.values()].flat().sort((a, b) => a - b)).toEqual(items.filter((i) => i !== 3 && i !== 30));
  });

  it('makes the same parts under the same tokens when the batch is replayed, so a replay stores nothing new', async () => {
    const items = Array.from({ length: 20 }, (_, i) => i);
    const first = fakeInsert(new Set([7]));
    await storeIsolating(items, 'batch', first.attempt);
    const second = fakeInsert(new Set([7]));
    await storeIsolating(items, 'batch', second.attempt);
    expect([...second.stored]).toEqual([...first.stored]);
  });

  it('lets an outage propagate, so that the whole batch is retried instead of skipped', async () => {
    const outage = { on: true };
    const { attempt } = fakeInsert(new Set([1]), outage);
    await expect(storeIsolating([0, 1, 2], 'batch', attempt)).rejects.toThrow(/ECONNREFUSED/);
  });
});
