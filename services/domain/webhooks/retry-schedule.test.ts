import { describe, expect, it } from 'vitest';
import { MAX_RETRY_DELAY_MS, nextAttemptAt, retryCeilingMs, RETRY_WINDOW_MS } from './retry-schedule.ts';

const BASE = 10_000;

describe('the retry schedule', () => {
  it('doubles the ceiling from the base after each failure, up to 6 hours', () => {
    expect([1, 2, 3, 4, 5].map((n) => retryCeilingMs(n, BASE))).toEqual([10_000, 20_000, 40_000, 80_000, 160_000]);
    expect(retryCeilingMs(12, BASE)).toBe(20_480_000);
    expect(retryCeilingMs(13, BASE)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryCeilingMs(500, BASE)).toBe(MAX_RETRY_DELAY_MS);
  });

  it('draws the pause uniformly below the ceiling (full jitter)', () => {
    const at = (random: number) =>
      nextAttemptAt({ attempt: 3, nowMs: 0, deadlineMs: RETRY_WINDOW_MS, baseMs: BASE }, () => random);
    expect(at(0)).toBe(0);
    expect(at(0.5)).toBe(20_000);
    expect(at(0.999999)).toBe(39_999);
  });

  it('cuts a pause that would pass the deadline to it, and gives up once the deadline is reached', () => {
    const deadlineMs = 1_000_000;
    expect(nextAttemptAt({ attempt: 20, nowMs: deadlineMs - 5, deadlineMs, baseMs: BASE }, () => 0.9)).toBe(deadlineMs);
    expect(nextAttemptAt({ attempt: 20, nowMs: deadlineMs, deadlineMs, baseMs: BASE }, () => 0.9)).toBeNull();
  });

  it('keeps retrying for the whole 24 hours however the draws fall, with a bounded number of attempts', () => {
    for (const random of [() => 0.999999, () => 0.5, Math.random]) {
      let nowMs = 0;
      let attempt = 1;
      let last = 0;
      for (;;) {
        const next = nextAttemptAt({ attempt, nowMs, deadlineMs: RETRY_WINDOW_MS, baseMs: BASE }, random);
        if (next === null) break;
        expect(next - nowMs).toBeLessThanOrEqual(MAX_RETRY_DELAY_MS);
        last = nowMs = next;
        attempt++;
      }
      expect(last).toBe(RETRY_WINDOW_MS);
      expect(attempt).toBeGreaterThan(10);
      // With the largest draws: 12 doublings then 6 h pauses until the deadline.
      if (random() > 0.99) expect(attempt).toBeLessThan(20);
    }
  });
});
