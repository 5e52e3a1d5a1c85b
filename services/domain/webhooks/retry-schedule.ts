/** How long a message is retried after it was emitted (or redelivered by hand: one attempt, then given up). */
export const RETRY_WINDOW_MS = 24 * 3_600_000;
/** The longest pause between two attempts. */
export const MAX_RETRY_DELAY_MS = 6 * 3_600_000;
/** An endpoint whose attempts all failed for this long, with none succeeding since, is disabled. */
export const DISABLE_AFTER_MS = 5 * 86_400_000;

/** The ceiling of the pause after failed attempt `attempt` (from 1): base · 2^(attempt-1), at most 6 hours. */
export function retryCeilingMs(attempt: number, baseMs: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, baseMs * 2 ** Math.min(attempt - 1, 40));
}

/**
 * When to try again after failed attempt `attempt`, or null to give up: exponential backoff with full
 * jitter (a uniform pause in [0, ceiling)), so that a receiver coming back is not hit by every message
 * at once. A pause that would pass the deadline is cut to it: the last attempt is made at the deadline,
 * so a message is retried for the whole window however the draws fall.
 */
export function nextAttemptAt(
  { attempt, nowMs, deadlineMs, baseMs }: { attempt: number; nowMs: number; deadlineMs: number; baseMs: number },
  random: () => number = Math.random,
): number | null {
  if (nowMs >= deadlineMs) return null;
  return Math.min(nowMs + Math.floor(random() * retryCeilingMs(attempt, baseMs)), deadlineMs);
}
