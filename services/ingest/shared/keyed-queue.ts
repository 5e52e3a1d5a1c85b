import { AppError } from '../../shared/errors.ts';

/**
 * How many changes of one session (or one agent or number) may wait or run at once in one ingest
 * process. Each waits for the broker's acknowledgement of the one before it (a few ms), so 1,000 is
 * seconds of backlog: far above what a worker sends for one call, and the bound a flood hits.
 */
export const MAX_WAITING_CHANGES = 1_000;

export interface KeyedQueueOptions {
  /** The most tasks of one key that may wait or run at once; beyond it `run` refuses at once. */
  readonly maxPerKey: number;
  /** The error a refused task rejects with. */
  readonly full: (key: string) => Error;
}

/** The detail of the 429 a change gets while too many changes of the same `what` (session, agent, number) wait. */
export function tooManyChangesWaiting(what: string): string {
  return `Too many changes of this ${what} are waiting; retry later`;
}

/** The queue of changes of one process, one turn per key; `what` names the thing a key stands for in the 429. */
export function changeQueue(what: (key: string) => string): KeyedQueue {
  return new KeyedQueue({
    maxPerKey: MAX_WAITING_CHANGES,
    full: (key) => AppError.of('TOO_MANY_REQUESTS', tooManyChangesWaiting(what(key))),
  });
}

/** The room lock's queue of one process: as many creates of one room may wait as changes of one session. */
export function roomQueue(): KeyedQueue {
  return new KeyedQueue({
    maxPerKey: MAX_WAITING_CHANGES,
    full: () => AppError.of('TOO_MANY_REQUESTS', 'Too many creates of this room are waiting; retry later'),
  });
}

/**
 * Runs tasks one after another per key, in call order. The Redis store uses it so that updates of
 * one session from this process never race each other for the compare-and-set; only updates from
 * other processes do, which keeps the bounded retry loop far from its bound. With `maxPerKey`, a
 * flood of tasks for one key is refused past that depth instead of queueing without end (each one
 * holds a request and its memory while it waits).
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();
  private readonly depths = new Map<string, number>();

  constructor(private readonly options: KeyedQueueOptions | null = null) {}

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const depth = this.depths.get(key) ?? 0;
    if (this.options !== null && depth >= this.options.maxPerKey) return Promise.reject(this.options.full(key));
    this.depths.set(key, depth + 1);
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      const left = (this.depths.get(key) ?? 1) - 1;
      if (left === 0) this.depths.delete(key);
      else this.depths.set(key, left);
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running; empty when idle (nothing leaks per session). */
  get size(): number {
    return this.tails.size;
  }
}
