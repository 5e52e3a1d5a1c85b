import { setTimeout as sleep } from 'node:timers/promises';

export interface RetryPolicy {
  /** Attempts before giving up; unbounded when left out (then `wait` decides when to stop). */
  readonly attempts?: number;
  /** The pause after failed attempt `n` (counted from 1). */
  readonly delayMs: (n: number) => number;
  /**
   * Spends the pause before the next attempt; false gives up. The default sleeps. The consumer
   * heartbeats while it waits and gives up when it loses its partition; the room lock gives up at its deadline.
   */
  readonly wait?: (ms: number) => Promise<boolean>;
}

/**
 * Runs `attempt` until it returns a value other than null, pausing between attempts as `policy` says;
 * null once the attempts run out or `wait` gives up. An error thrown by `attempt` ends the retry: an
 * attempt that should survive an error catches it and returns null.
 *
 * One small function rather than p-retry: the retries here are compare-and-set writes that lost a race
 * (a null, not an error), a pause that must heartbeat and be cut short, and full jitter, which p-retry
 * expresses only by throwing sentinel errors and by its own uninterruptible sleep.
 */
export async function retry<T>(attempt: (n: number) => Promise<T | null>, policy: RetryPolicy): Promise<T | null> {
  const wait = policy.wait ?? pause;
  for (let n = 1; ; n++) {
    const outcome = await attempt(n);
    if (outcome !== null) return outcome;
    if (n >= (policy.attempts ?? Number.POSITIVE_INFINITY)) return null;
    if (!(await wait(policy.delayMs(n)))) return null;
  }
}

/** Exponential growth from `firstMs`, capped at `maxMs`: the pause after attempt n is firstMs * 2^(n-1). */
export function exponentialDelay(firstMs: number, maxMs: number): (n: number) => number {
  return (n) => Math.min(firstMs * 2 ** (n - 1), maxMs);
}

/**
 * Full jitter below a short cap: writers that lost a compare-and-set race to each other pause for
 * different times, so they do not collide again.
 */
export function jitteredDelay(n: number): number {
  return Math.random() * Math.min(50, 2 ** n);
}

/** A wait that gives up once the clock reaches `deadlineMs` (epoch milliseconds). */
export function waitUntil(deadlineMs: number): (ms: number) => Promise<boolean> {
  return async (ms) => {
    if (Date.now() >= deadlineMs) return false;
    await sleep(ms);
    return true;
  };
}

async function pause(ms: number): Promise<boolean> {
  await sleep(ms);
  return true;
}
