import { describe, expect, it } from 'vitest';
import { snapshotMessages, stateId, Wakeup } from './event-stream.ts';

async function next(messages: AsyncGenerator<string>): Promise<string | undefined> {
  return (await messages.next()).value as string | undefined;
}

describe('snapshotMessages', () => {
  it('sends the state at once, then only states that changed, once per wake-up however many came', async () => {
    let state = { total: '0', as_of: 1 };
    let reads = 0;
    const wakeup = new Wakeup();
    const messages = snapshotMessages(
      {
        event: 'live',
        heartbeatMs: 60_000,
        volatile: ['as_of'],
        read: async () => {
          reads += 1;
          return state;
        },
      },
      wakeup,
    );
    expect(await next(messages)).toBe('retry: 2000\n\n');
    expect(await next(messages)).toBe(
      `id: ${stateId(state, ['as_of'])}\nevent: live\ndata: {"total":"0","as_of":1}\n\n`,
    );
    // Three wake-ups while the reader is away are one read; a state that differs only in as_of is not sent.
    state = { total: '0', as_of: 2 };
    wakeup.notify();
    wakeup.notify();
    wakeup.notify();
    const pending = next(messages);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(reads).toBe(2);
    state = { total: '1.5', as_of: 3 };
    wakeup.notify();
    expect(await pending).toContain('data: {"total":"1.5","as_of":3}');
    expect(reads).toBe(3);
    wakeup.close();
    expect(await messages.next()).toEqual({ done: true, value: undefined });
  });

  it('sends a heartbeat comment after the idle time, and nothing the reader already has', async () => {
    const state = { total: '2' };
    const wakeup = new Wakeup();
    const messages = snapshotMessages(
      { event: 'live', heartbeatMs: 20, read: async () => state, lastEventId: stateId(state) },
      wakeup,
    );
    expect(await next(messages)).toBe('retry: 2000\n\n');
    expect(await next(messages)).toBe(': heartbeat\n\n');
    wakeup.close();
    expect((await messages.next()).done).toBe(true);
  });

  it('ends after a final state, sent under the final event name', async () => {
    const wakeup = new Wakeup();
    const messages = snapshotMessages(
      {
        event: 'breakdown',
        finalEvent: 'end',
        heartbeatMs: 60_000,
        read: async () => ({ status: 'COMPLETED' }),
        isFinal: (s) => s.status === 'COMPLETED',
      },
      wakeup,
    );
    await next(messages);
    expect(await next(messages)).toMatch(/^id: \S+\nevent: end\ndata: \{"status":"COMPLETED"\}\n\n$/);
    expect((await messages.next()).done).toBe(true);
  });
});
