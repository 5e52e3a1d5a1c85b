import { describe, expect, it } from 'vitest';
import { MicroBatcher } from './micro-batcher.ts';

describe('MicroBatcher', () => {
  it('flushes items submitted in one turn together, in order, and resolves each submit after its flush', async () => {
    const flushes: number[][] = [];
    const batcher = new MicroBatcher<number>(async (items) => void flushes.push(items));
    await Promise.all([batcher.submit([1, 2]), batcher.submit([3]), batcher.submit([4, 5])]);
    expect(flushes).toEqual([[1, 2, 3, 4, 5]]);
  });

  it('gathers what arrives during a flush into the next one', async () => {
    const flushes: number[][] = [];
    let release: () => void = () => undefined;
    const batcher = new MicroBatcher<number>(async (items) => {
      flushes.push(items);
      if (flushes.length === 1) await new Promise<void>((resolve) => (release = resolve));
    });
    const first = batcher.submit([1]);
    await new Promise((resolve) => setImmediate(resolve));
    const later = [batcher.submit([2]), batcher.submit([3])];
    release();
    await Promise.all([first, ...later]);
    expect(flushes).toEqual([[1], [2, 3]]);
  });

  it('rejects every submit of a failed flush and only those', async () => {
    let calls = 0;
    const batcher = new MicroBatcher<number>(async () => {
      calls += 1;
      if (calls === 1) throw new Error('broker down');
    });
    const failed = Promise.allSettled([batcher.submit([1]), batcher.submit([2])]);
    expect((await failed).map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await expect(batcher.submit([3])).resolves.toBeUndefined();
  });

  it('caps a flush at maxItemsPerFlush without splitting a submit', async () => {
    const flushes: number[][] = [];
    const batcher = new MicroBatcher<number>(async (items) => void flushes.push(items), { maxItems: 3 });
    await Promise.all([batcher.submit([1, 2]), batcher.submit([3, 4]), batcher.submit([5])]);
    expect(flushes).toEqual([
      [1, 2],
      [3, 4, 5],
    ]);
  });

  it('caps the total weight of a flush, in submit order, without splitting a submit', async () => {
    const flushes: number[][] = [];
    const batcher = new MicroBatcher<number>(async (items) => void flushes.push(items), {
      maxWeight: 10,
      weigh: (item) => item,
    });
    await Promise.all([batcher.submit([4, 5]), batcher.submit([2]), batcher.submit([1]), batcher.submit([3, 3])]);
    expect(flushes).toEqual([
      [4, 5],
      [2, 1, 3, 3],
    ]);
  });

  it('flushes a submit heavier than the cap alone, so that its failure is its own', async () => {
    const flushes: number[][] = [];
    const batcher = new MicroBatcher<number>(
      async (items) => {
        flushes.push(items);
        if (items.includes(50)) throw new Error('too large');
      },
      { maxWeight: 10, weigh: (item) => item },
    );
    const results = await Promise.allSettled([batcher.submit([1]), batcher.submit([50]), batcher.submit([2])]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected', 'fulfilled']);
    expect(flushes).toEqual([[1], [50], [2]]);
  });
});
