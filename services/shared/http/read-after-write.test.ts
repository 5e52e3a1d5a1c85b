import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { readAfterWrite, STALE_READ_HEADER } from './read-after-write.ts';
import { withSignal } from '../abortable.ts';

/** Which requests wait for the journal: the middleware with a wait the test counts. */
async function waits(method: string, path: string): Promise<boolean> {
  let waited = false;
  await readAfterWrite(async () => (waited = true))(
    { method, path, set: () => undefined } as unknown as Context,
    async () => undefined,
  );
  return waited;
}

describe('readAfterWrite', () => {
  it('lets usage posts and new rate entries through at once and makes every other request wait for the journal', async () => {
    expect(await waits('POST', '/api/usage/events')).toBe(false);
    expect(await waits('POST', '/api/usage/events/batch')).toBe(false);
    expect(await waits('POST', '/api/rates')).toBe(false);
    expect(await waits('DELETE', '/api/rates/tenant-1')).toBe(true);
    expect(await waits('GET', '/healthz')).toBe(false);
    expect(await waits('GET', '/readyz')).toBe(false);
    expect(await waits('GET', '/api/costs/summary')).toBe(true);
    expect(await waits('GET', '/api/usage/events')).toBe(true);
    expect(await waits('PATCH', '/api/sessions/abc')).toBe(true);
    expect(await waits('POST', '/api/sessions/abc/transcripts')).toBe(true);
  });
});

describe('readAfterWrite, behind a writer that did not catch up', () => {
  it('answers from what is stored and marks the answer stale, and marks nothing once caught up', async () => {
    const answer = async (caught: boolean) => {
      const headers = new Map<string, string>();
      const ctx = {
        method: 'GET',
        path: '/api/costs/summary',
        set: (name: string, value: string) => headers.set(name, value),
      };
      let routed = false;
      await readAfterWrite(async () => caught)(ctx as unknown as Context, async () => {
        routed = true;
      });
      return { routed, stale: headers.get(STALE_READ_HEADER) ?? null };
    };
    expect(await answer(false)).toEqual({ routed: true, stale: 'journal' });
    expect(await answer(true)).toEqual({ routed: true, stale: null });
  });
});

describe('readAfterWrite, when the client goes away', () => {
  it('stops waiting for the journal and never runs the route', async () => {
    const request = new AbortController();
    let routed = false;
    const waiting = withSignal(request.signal, () =>
      readAfterWrite(() => new Promise(() => {}))(
        { method: 'GET', path: '/api/costs/summary' } as Context,
        async () => {
          routed = true;
        },
      ),
    );
    request.abort();
    await expect(waiting).rejects.toThrow(/aborted/);
    expect(routed).toBe(false);
  });
});
