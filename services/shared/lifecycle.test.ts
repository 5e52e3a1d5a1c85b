import { describe, expect, it } from 'vitest';
import { Shutdown } from './lifecycle.ts';
import { createLogger } from './logger.ts';

describe('Shutdown', () => {
  it('closes in reverse order of registration, once however often it is asked', async () => {
    const closed: string[] = [];
    const shutdown = new Shutdown(createLogger('silent'), 1_000);
    for (const name of ['clickhouse', 'kafka', 'http']) shutdown.add(name, async () => void closed.push(name));
    await Promise.all([shutdown.run('SIGTERM'), shutdown.run('SIGINT')]);
    expect(closed).toEqual(['http', 'kafka', 'clickhouse']);
  });

  it('goes on after a closer fails, and gives up at the deadline on one that hangs', async () => {
    const closed: string[] = [];
    const shutdown = new Shutdown(createLogger('silent'), 200);
    shutdown.add('never-called', async () => void closed.push('never-called'));
    shutdown.add('hangs', () => new Promise(() => undefined));
    shutdown.add('fails', async () => {
      closed.push('fails');
      throw new Error('boom');
    });
    const started = Date.now();
    await shutdown.run('test');
    expect(closed).toEqual(['fails']);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('listen', () => {
  it('lets a request in flight finish when the server is closed, and takes no new connection', async () => {
    const { default: Koa } = await import('koa');
    const { listen } = await import('./lifecycle.ts');
    const app = new Koa();
    let release: () => void = () => undefined;
    let arrived: () => void = () => undefined;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const inside = new Promise<void>((resolve) => (arrived = resolve));
    app.use(async (ctx) => {
      arrived();
      await slow;
      ctx.body = 'done';
    });
    const http = await listen(app, 0, '127.0.0.1');
    const port = (http.server.address() as { port: number }).port;
    const inFlight = fetch(`http://127.0.0.1:${port}/`);
    // Closed once the request is in the app, however slow the machine is to get it there.
    await inside;
    const closed = http.close();
    await new Promise((resolve) => setTimeout(resolve, 50));
    await expect(fetch(`http://127.0.0.1:${port}/`)).rejects.toThrow();
    release();
    const response = await inFlight;
    expect([response.status, await response.text()]).toEqual([200, 'done']);
    await closed;
  });
});
