import { EventEmitter } from 'node:events';
import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { currentSignal } from '../../shared/abortable.ts';
import { AppError } from '../../shared/errors.ts';
import { MemoryAnnouncements } from '../../shared/redis/stored-announcements.ts';
import { LiveStreams, STREAM_YIELD_MS, streamCaller, type LiveStreamLimits } from './live-streams.ts';

const LIMITS: LiveStreamLimits = { perTenant: 2, perCaller: 3, total: 4, reads: 1, heartbeatMs: 60_000 };

/** A request's context as the streams use it: its response's close, its client-gone signal, and its headers. */
function request(): { ctx: Context; leave: () => void; clientGone: AbortController } {
  const res = new EventEmitter();
  const clientGone = new AbortController();
  return {
    ctx: { res, state: { clientGone: clientGone.signal }, get: () => '' } as unknown as Context,
    leave: () => res.emit('close'),
    clientGone,
  };
}

function refusal(open: () => unknown): { status: string; detail: string; retryAfter?: string } | null {
  try {
    open();
    return null;
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: error.code, detail: String(error.detail), retryAfter: error.headers['Retry-After'] };
  }
}

/** The messages of a stream's body, pulled one at a time. */
function messagesOf(body: ReturnType<LiveStreams['open']>): AsyncIterator<string> {
  return (body.text as () => AsyncIterable<string>)()[Symbol.asyncIterator]();
}

describe('LiveStreams caps', () => {
  const streams = () => new LiveStreams(new MemoryAnnouncements(), LIMITS, new AbortController().signal);
  const read = { event: 'live', read: async () => ({}) };

  it('refuses a tenant past its cap with a 429 and Retry-After, and admits it again once one closes', () => {
    const live = streams();
    const first = request();
    live.open(first.ctx, 't', null, { tenant: 't' }, read);
    live.open(request().ctx, 't', null, { tenant: 't' }, read);
    expect(refusal(() => live.open(request().ctx, 't', null, { tenant: 't' }, read))).toMatchObject({
      status: 'TOO_MANY_REQUESTS',
      detail: expect.stringContaining('for this user (2)'),
      retryAfter: '30',
    });
    first.leave();
    expect(refusal(() => live.open(request().ctx, 't', null, { tenant: 't' }, read))).toBeNull();
    expect(live.stats.refused).toEqual({ tenant: 1, caller: 0, process: 0 });
  });

  it('refuses one caller naming many tenants past its own cap, whatever tenants it names', () => {
    const live = streams();
    for (let i = 0; i < 3; i += 1) live.open(request().ctx, `t${i}`, 'address 10.0.0.1', { tenant: `t${i}` }, read);
    expect(refusal(() => live.open(request().ctx, 't9', 'address 10.0.0.1', { tenant: 't9' }, read))).toMatchObject({
      status: 'TOO_MANY_REQUESTS',
      detail: expect.stringContaining('credential or address (3)'),
    });
    expect(refusal(() => live.open(request().ctx, 't9', 'address 10.0.0.2', { tenant: 't9' }, read))).toBeNull();
    expect(live.openFor('t9')).toBe(1);
  });

  it('counts no stream of a reader gone before it opened, and frees a stream once its reader is gone, whichever signal says so', () => {
    const live = streams();
    for (let i = 0; i < 10; i += 1) {
      // Left during the rate limit's or the token's await: the response's close fired before open().
      const early = request();
      early.leave();
      early.clientGone.abort(new DOMException('The client closed the request', 'AbortError'));
      expect(() => live.open(early.ctx, 't', 'address 10.0.0.1', { tenant: 't' }, read)).toThrow(
        'The client closed the request',
      );
    }
    expect([live.stats.open, live.openFor('t')]).toEqual([0, 0]);
    const left = request();
    live.open(left.ctx, 't', 'address 10.0.0.1', { tenant: 't' }, read);
    left.clientGone.abort();
    left.leave();
    expect([live.stats.open, live.openFor('t')]).toEqual([0, 0]);
    for (let i = 0; i < 2; i += 1) live.open(request().ctx, 't', 'address 10.0.0.1', { tenant: 't' }, read);
    expect(live.stats.open).toBe(2);
  });

  it('refuses any stream past the process’s cap with a 503 and Retry-After', () => {
    const live = streams();
    for (let i = 0; i < 4; i += 1) live.open(request().ctx, `t${i}`, `credential key k${i}`, { tenant: `t${i}` }, read);
    expect(refusal(() => live.open(request().ctx, 'other', null, { tenant: 'other' }, read))).toMatchObject({
      status: 'DEPENDENCY_UNAVAILABLE',
      detail: expect.stringContaining('(4)'),
      retryAfter: '30',
    });
    expect(live.stats).toMatchObject({ open: 4, refused: { tenant: 0, caller: 0, process: 1 } });
  });
});

describe('LiveStreams reads', () => {
  it('reads a tenant once for all its streams, and again for each announcement', async () => {
    const announcements = new MemoryAnnouncements();
    const live = new LiveStreams(announcements, { ...LIMITS, perTenant: 10, total: 10 }, new AbortController().signal);
    let reads = 0;
    let finish = () => {};
    const read = async () => {
      reads += 1;
      await new Promise<void>((resolve) => (finish = resolve));
      return { reads };
    };
    const bodies = [1, 2, 3].map(() =>
      messagesOf(live.open(request().ctx, 't', null, { tenant: 't' }, { event: 'live', read })),
    );
    for (const body of bodies) await body.next(); // retry:
    const firsts = bodies.map((body) => body.next());
    await new Promise((resolve) => setTimeout(resolve, 5));
    finish();
    for (const first of await Promise.all(firsts)) expect(first.value).toContain('"reads":1');
    expect(reads).toBe(1);
    await announcements.publish({ tenants: ['t'], sessions: [] });
    const seconds = bodies.map((body) => body.next());
    await new Promise((resolve) => setTimeout(resolve, 5));
    finish();
    for (const second of await Promise.all(seconds)) expect(second.value).toContain('"reads":2');
    expect([reads, live.stats.readsRun]).toEqual([2, 2]);
  });

  it('runs at most `reads` reads at once, and cancels a tenant’s read, waiting or running, once its streams are gone', async () => {
    const live = new LiveStreams(
      new MemoryAnnouncements(),
      { ...LIMITS, perTenant: 10, total: 10 },
      new AbortController().signal,
    );
    const signals: (AbortSignal | undefined)[] = [];
    const read = () => {
      signals.push(currentSignal());
      return new Promise<never>(() => {});
    };
    const a = request();
    const b = request();
    const bodyA = messagesOf(live.open(a.ctx, 'a', null, { tenant: 'a' }, { event: 'live', read }));
    const bodyB = messagesOf(live.open(b.ctx, 'b', null, { tenant: 'b' }, { event: 'live', read }));
    await bodyA.next();
    await bodyB.next();
    void bodyA.next().catch(() => undefined);
    const waitingB = bodyB.next();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect([signals.length, live.stats.readsWaiting]).toEqual([1, 1]);
    b.leave();
    expect(await waitingB).toEqual({ done: true, value: undefined });
    expect([signals.length, live.stats.readsWaiting]).toEqual([1, 0]);
    expect(signals[0]?.aborted).toBe(false);
    a.leave();
    expect(signals[0]?.aborted).toBe(true);
  });
});

describe('LiveStreams yielding to requests', () => {
  it('starts a read once no request reads, or after STREAM_YIELD_MS at most', async () => {
    let requestReading = true;
    const live = new LiveStreams(
      new MemoryAnnouncements(),
      { ...LIMITS, perTenant: 10, total: 10 },
      new AbortController().signal,
      () => requestReading,
    );
    let reads = 0;
    const read = async () => ({ reads: (reads += 1) });
    const body = messagesOf(live.open(request().ctx, 't', null, { tenant: 't' }, { event: 'live', read }));
    await body.next(); // retry:
    const first = body.next();
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(reads).toBe(0);
    requestReading = false;
    expect((await first).value).toContain('"reads":1');

    // A request that reads for ever holds a stream's read back STREAM_YIELD_MS, no longer.
    const always = new LiveStreams(
      new MemoryAnnouncements(),
      { ...LIMITS, perTenant: 10, total: 10 },
      new AbortController().signal,
      () => true,
    );
    const held = messagesOf(always.open(request().ctx, 't', null, { tenant: 't' }, { event: 'live', read }));
    await held.next();
    const started = performance.now();
    expect((await held.next()).value).toContain('"reads":2');
    expect(performance.now() - started).toBeGreaterThanOrEqual(STREAM_YIELD_MS - 5);
  });
});

describe('LiveStreams, stopping', () => {
  it('ends every stream and cancels the reads waiting for a slot, so close() waits only for those running', async () => {
    const stopping = new AbortController();
    const live = new LiveStreams(new MemoryAnnouncements(), { ...LIMITS, perTenant: 10, total: 10 }, stopping.signal);
    let finish = () => {};
    const read = () => new Promise<object>((resolve) => (finish = () => resolve({})));
    const bodies = ['a', 'b', 'c'].map((tenant) =>
      messagesOf(live.open(request().ctx, tenant, null, { tenant }, { event: 'live', read })),
    );
    for (const body of bodies) await body.next();
    const ends = bodies.map((body) => body.next());
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(live.stats.readsWaiting).toBe(2);
    stopping.abort();
    const closed = live.close();
    expect(live.stats.readsWaiting).toBe(0);
    finish();
    await closed;
    // The read that was running still answers its stream; the two waiting ended without reading.
    const [running, ...waiting] = await Promise.all(ends);
    expect(running!.value).toContain('event: live');
    for (const end of waiting) expect(end.done).toBe(true);
    expect(live.stats.readsRun).toBe(1);
  });
});

describe('streamCaller', () => {
  it('counts a bound credential by its tenant only, an unbound one by its id, and `off` by the source address', () => {
    expect(streamCaller({ kind: 'key', id: 'k1', tenant: 't' }, '10.0.0.1')).toBeNull();
    expect(streamCaller({ kind: 'key', id: 'k1', tenant: null }, '10.0.0.1')).toBe('credential key k1');
    expect(streamCaller({ kind: 'anonymous', id: 'anonymous', tenant: null }, '10.0.0.1')).toBe('address 10.0.0.1');
  });
});
