import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import {
  inRequest,
  readAfterWrite,
  readTenant,
  STALE_READ_HEADER,
  type JournalFence,
  type ReadFence,
} from './read-after-write.ts';
import { withSignal } from '../abortable.ts';

interface Routed {
  /** The tenant each wait was for (null: every tenant); empty when the request waited for nothing. */
  readonly waits: (string | null)[];
  /** readTenant() inside the route, after its fence. */
  readonly readTenant: string | null;
  readonly stale: string | null;
}

/** A request through the middleware to a route that calls its fence as defineRoute does, with `tenant`. */
async function route(
  method: string,
  path: string,
  { tenant = null, caughtUp = async () => true }: { tenant?: string | null; caughtUp?: JournalFence } = {},
): Promise<Routed> {
  const waits: (string | null)[] = [];
  const headers = new Map<string, string>();
  const ctx = { method, path, state: {}, set: (name: string, value: string) => headers.set(name, value) };
  let inside: string | null = 'not routed';
  await readAfterWrite(async (wanted) => {
    waits.push(wanted);
    return caughtUp(wanted);
  })(ctx as unknown as Context, async () => {
    await (ctx.state as { readFence?: ReadFence }).readFence?.(tenant);
    inside = readTenant();
  });
  return { waits, readTenant: inside, stale: headers.get(STALE_READ_HEADER) ?? null };
}

describe('readAfterWrite', () => {
  it('lets usage posts and new rate entries through at once and makes every other route wait for the journal', async () => {
    const waited = async (method: string, path: string) => (await route(method, path)).waits.length > 0;
    expect(await waited('POST', '/api/usage/events')).toBe(false);
    expect(await waited('POST', '/api/usage/events/batch')).toBe(false);
    expect(await waited('POST', '/api/rates')).toBe(false);
    expect(await waited('DELETE', '/api/rates/tenant-1')).toBe(true);
    expect(await waited('GET', '/healthz')).toBe(false);
    expect(await waited('GET', '/readyz')).toBe(false);
    expect(await waited('GET', '/api/costs/summary')).toBe(true);
    expect(await waited('GET', '/api/usage/events')).toBe(true);
    expect(await waited('PATCH', '/api/sessions/abc')).toBe(true);
    expect(await waited('POST', '/api/sessions/abc/transcripts')).toBe(true);
  });

  it('says a request is running to the reads of every route but the operational ones, and not outside one', async () => {
    const running = async (method: string, path: string) => {
      const ctx = { method, path, state: {}, set: () => undefined };
      let inside = false;
      await readAfterWrite(async () => true)(ctx as unknown as Context, async () => {
        inside = inRequest();
      });
      return inside;
    };
    expect(await running('POST', '/api/usage/events')).toBe(true);
    expect(await running('POST', '/api/rates')).toBe(true);
    expect(await running('GET', '/api/costs/summary')).toBe(true);
    expect(await running('GET', '/readyz')).toBe(false);
    expect(inRequest()).toBe(false);
  });

  it('waits for the tenant its route names, and the reads under it wait for that tenant too', async () => {
    expect(await route('GET', '/api/costs/summary', { tenant: 'tenant-a' })).toEqual({
      waits: ['tenant-a'],
      readTenant: 'tenant-a',
      stale: null,
    });
    expect(await route('GET', '/api/sessions/', { tenant: null })).toEqual({
      waits: [null],
      readTenant: null,
      stale: null,
    });
    expect(readTenant()).toBeNull();
  });
});

describe('readAfterWrite, behind a writer that did not catch up', () => {
  it('answers from what is stored and marks the answer stale, and marks nothing once caught up', async () => {
    const answer = async (caught: boolean) => {
      const { waits, stale } = await route('GET', '/api/costs/summary', { caughtUp: async () => caught });
      return { routed: waits.length === 1, stale };
    };
    expect(await answer(false)).toEqual({ routed: true, stale: 'journal' });
    expect(await answer(true)).toEqual({ routed: true, stale: null });
  });
});

describe('readAfterWrite, when the client goes away', () => {
  it('stops waiting for the journal and never runs the route', async () => {
    const request = new AbortController();
    let routed = false;
    const ctx = { method: 'GET', path: '/api/costs/summary', state: {}, set: () => undefined };
    const waiting = withSignal(request.signal, () =>
      readAfterWrite(() => new Promise(() => {}))(ctx as unknown as Context, async () => {
        await (ctx.state as { readFence?: ReadFence }).readFence?.(null);
        routed = true;
      }),
    );
    request.abort();
    await expect(waiting).rejects.toThrow(/aborted/);
    expect(routed).toBe(false);
  });
});
