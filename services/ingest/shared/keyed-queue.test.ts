import { describe, expect, it } from 'vitest';
import { KeyedQueue } from './keyed-queue.ts';

describe('KeyedQueue', () => {
  it('runs the tasks of one key one at a time in call order, and other keys alongside', async () => {
    const queue = new KeyedQueue();
    const log: string[] = [];
    const task = (name: string, ms: number) => async () => {
      log.push(`start ${name}`);
      await new Promise((resolve) => setTimeout(resolve, ms));
      log.push(`end ${name}`);
      return name;
    };
    const results = await Promise.all([
      queue.run('a', task('a1', 20)),
      queue.run('a', task('a2', 1)),
      queue.run('b', task('b1', 1)),
    ]);
    expect(results).toEqual(['a1', 'a2', 'b1']);
    expect(log).toEqual(['start a1', 'start b1', 'end b1', 'end a1', 'start a2', 'end a2']);
  });

  it('goes on after a failed task and forgets idle keys', async () => {
    const queue = new KeyedQueue();
    const failed = queue.run('a', () => Promise.reject(new Error('boom')));
    const next = queue.run('a', async () => 'next');
    await expect(failed).rejects.toThrow('boom');
    await expect(next).resolves.toBe('next');
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.size).toBe(0);
  });
});

describe('KeyedQueue with a depth bound', () => {
  it('refuses a task past the bound of its key at once, takes other keys, and takes the key again once it drains', async () => {
    const queue = new KeyedQueue({ maxPerKey: 2, full: (key) => new Error(`full: ${key}`) });
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const first = queue.run('a', async () => {
      await gate;
      return 1;
    });
    const second = queue.run('a', async () => 2);
    await expect(queue.run('a', async () => 3)).rejects.toThrow('full: a');
    await expect(queue.run('b', async () => 'b')).resolves.toBe('b');
    release();
    await expect(Promise.all([first, second])).resolves.toEqual([1, 2]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(queue.size).toBe(0);
    await expect(queue.run('a', async () => 4)).resolves.toBe(4);
  });

  it('counts a failed task out of its key like a finished one', async () => {
    const queue = new KeyedQueue({ maxPerKey: 1, full: () => new Error('full') });
    await expect(queue.run('a', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await new Promise((resolve) => setImmediate(resolve));
    await expect(queue.run('a', async () => 'again')).resolves.toBe('again');
  });
});
