import type { Logger } from './logger.ts';

/**
 * Runs `refresh` every `intervalMs` (the timer does not hold the process open); a failed run is logged
 * as `event` and tried again at the next. Answers the stop. What a process keeps of a table it reads
 * again and again (the closed months, the webhook endpoints, the budgets) refreshes through this.
 */
export function refreshEvery(intervalMs: number, refresh: () => Promise<void>, log: Logger, event: string): () => void {
  const timer = setInterval(() => refresh().catch((error: unknown) => log.warn({ err: error }, event)), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
