import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createLogger } from '../logger.ts';
import { backlogGate } from './backlog-gate.ts';
import { createHttpApp } from './create-app.ts';

const servers: { close: () => void }[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

/** An app whose usage route counts the bodies it read, behind the gate of a journal `full` says is full or not. */
async function serve(full: () => boolean): Promise<{ url: string; bodiesRead: () => number }> {
  let bodiesRead = 0;
  const app = createHttpApp({
    service: 'test',
    log: createLogger('silent'),
    checks: [],
    beforeRoutes: [backlogGate(full)],
    routes: [
      (router) => {
        router.post('/api/usage/events/batch', async (ctx) => {
          for await (const chunk of ctx.req) void chunk;
          bodiesRead += 1;
          ctx.status = 200;
          ctx.body = { accepted: true };
        });
        router.get('/api/usage/events/batch', (ctx) => {
          ctx.body = { read: true };
        });
      },
    ],
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, bodiesRead: () => bodiesRead };
}

const post = (url: string) =>
  fetch(`${url}/api/usage/events/batch`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(Array.from({ length: 500 }, (_, i) => ({ session_id: 's', user_id: 'u', quantity: i }))),
  });

describe('the journal backlog gate', () => {
  it("answers a usage post 503 with Retry-After while the journal is full, without reading its body, and the post's route once it is not", async () => {
    let full = true;
    const app = await serve(() => full);
    const refused = await post(app.url);
    expect(refused.status).toBe(503);
    expect(refused.headers.get('retry-after')).toBe('1');
    expect(await refused.json()).toEqual({ detail: 'Too many records waiting to be stored, try again' });
    expect(app.bodiesRead()).toBe(0);
    // The connection the refused post left is still usable, and a read is never gated.
    expect((await fetch(`${app.url}/api/usage/events/batch`)).status).toBe(200);
    full = false;
    const taken = await post(app.url);
    expect(taken.status).toBe(200);
    expect(app.bodiesRead()).toBe(1);
  });
});
