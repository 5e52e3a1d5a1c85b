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
