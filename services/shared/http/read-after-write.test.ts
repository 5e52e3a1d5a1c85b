import type { Context } from 'koa';
import { describe, expect, it } from 'vitest';
import { readAfterWrite } from './read-after-write.ts';
import { withSignal } from '../abortable.ts';

/** Which requests wait for the journal: the middleware with a wait the test counts. */
async function waits(method: string, path: string): Promise<boolean> {
  let waited = false;
  await readAfterWrite(async () => (waited = true))({ method, path } as Context, async () => undefined);
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
