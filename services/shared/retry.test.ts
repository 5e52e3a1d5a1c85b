import { describe, expect, it } from 'vitest';
import { exponentialDelay, jitteredDelay, retry, waitUntil } from './retry.ts';

describe('retry', () => {
  it('returns the first outcome that is not null, pausing after each null as the policy says', async () => {
    const pauses: number[] = [];
    const outcome = await retry(async (n) => (n === 3 ? `done at ${n}` : null), {
      delayMs: exponentialDelay(100, 150),
      wait: async (ms) => (pauses.push(ms), true),
    });
    expect(outcome).toBe('done at 3');
    expect(pauses).toEqual([100, 150]);
  });

  it('gives up with null after the last attempt, without a pause after it', async () => {
    let pauses = 0;
    let attempts = 0;
    const outcome = await retry(async () => (attempts++, null), {
      attempts: 4,
      delayMs: () => 0,
      wait: async () => (pauses++, true),
    });
    expect(outcome).toBeNull();
    expect([attempts, pauses]).toEqual([4, 3]);
  });

  it('gives up with null when the wait says stop', async () => {
    let attempts = 0;
    const outcome = await retry(async () => (attempts++, null), { delayMs: () => 0, wait: async () => attempts < 2 });
    expect(outcome).toBeNull();
    expect(attempts).toBe(2);
  });

  it('ends on an error thrown by an attempt', async () => {
    let attempts = 0;
    const failing = retry(
      async () => {
        attempts++;
        throw new Error('refused');
      },
      { attempts: 5, delayMs: () => 0 },
    );
    await expect(failing).rejects.toThrow('refused');
    expect(attempts).toBe(1);
  });

  it('waits until a deadline that has passed gives up at once', async () => {
    expect(await waitUntil(Date.now() - 1)(10_000)).toBe(false);
    expect(await waitUntil(Date.now() + 60_000)(1)).toBe(true);
  });

  it('jitters below 2^n and never above 50 ms', () => {
    for (let n = 1; n <= 10; n++) {
      const delay = jitteredDelay(n);
      expect(delay).toBeGreaterThanOrEqual(0);
      expect(delay).toBeLessThan(Math.min(50, 2 ** n));
    }
  });
});
