import { describe, expect, it } from 'vitest';
import { currentSignal, Lender, SharedSignal, untilAborted, withSignal } from './abortable.ts';

describe('Lender', () => {
  it('lends idle items at once and the rest in order of asking, as items come back', async () => {
    const lender = new Lender(['a']);
    const first = await lender.borrow();
    const order: string[] = [];
    const second = lender.borrow().then((item) => (order.push(`second ${item}`), item));
    const third = lender.borrow().then((item) => (order.push(`third ${item}`), item));
    expect([lender.waiting, lender.lent]).toEqual([2, 1]);
    lender.giveBack(first);
    lender.giveBack(await second);
    await third;
    expect(order).toEqual(['second a', 'third a']);
  });

  it('withdraws a waiter whose signal aborts: it leaves the queue at once and never takes an item', async () => {
    const lender = new Lender([1]);
    const held = await lender.borrow();
    const leaving = new AbortController();
    const gone = lender.borrow(leaving.signal);
    const staying = lender.borrow();
    expect(lender.waiting).toBe(2);
    leaving.abort();
    await expect(gone).rejects.toThrow(/aborted/);
    expect([lender.waiting, lender.withdrawn]).toEqual([1, 1]);
    lender.giveBack(held);
    expect(await staying).toBe(1);
    await expect(lender.borrow(AbortSignal.abort())).rejects.toThrow();
    expect(lender.withdrawn).toBe(1);
  });

  it('on close refuses those waiting and new borrowers, and returns the items once all came back', async () => {
    const lender = new Lender(['x']);
    const held = await lender.borrow();
    const waiting = lender.borrow();
    const closed = lender.close(new Error('closing'));
    await expect(waiting).rejects.toThrow('closing');
    await expect(lender.borrow()).rejects.toThrow('closing');
    lender.giveBack(held);
    expect(await closed).toEqual(['x']);
  });
});

describe('untilAborted', () => {
  it('rejects when the signal aborts, without waiting for the work or leaving its rejection unhandled', async () => {
    const controller = new AbortController();
    let fail = (_: Error) => {};
    const work = new Promise<never>((_, reject) => (fail = reject));
    const waiting = untilAborted(work, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toThrow(/aborted/);
    fail(new Error('late'));
    expect(await untilAborted(Promise.resolve(3), new AbortController().signal)).toBe(3);
  });
});

describe('withSignal', () => {
  it('carries the signal through what the work awaits, and no further', async () => {
    const signal = new AbortController().signal;
    const seen = await withSignal(signal, async () => {
      await new Promise((resolve) => setTimeout(resolve, 1));
      return currentSignal();
    });
    expect(seen).toBe(signal);
    expect(currentSignal()).toBeUndefined();
  });
});

describe('SharedSignal', () => {
  it('aborts once every waiter that joined has gone, and never when one without a signal joined', () => {
    const a = new AbortController();
    const b = new AbortController();
    const shared = new SharedSignal();
    shared.join(a.signal);
    shared.join(b.signal);
    a.abort();
    expect(shared.signal.aborted).toBe(false);
    b.abort();
    expect(shared.signal.aborted).toBe(true);
    const kept = new SharedSignal();
    const c = new AbortController();
    kept.join(c.signal);
    kept.join(undefined);
    c.abort();
    expect(kept.signal.aborted).toBe(false);
  });
});
