import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The signal of the request whose work is running (aborted when its client goes away), carried through
 * the async calls under it, so that every ClickHouse read a route makes is cancelled with the request
 * without every query function taking and passing a signal of its own.
 */
const current = new AsyncLocalStorage<AbortSignal>();

/** Runs `work` (and everything it awaits) under `signal`. */
export function withSignal<T>(signal: AbortSignal, work: () => T): T {
  return current.run(signal, work);
}

/** The signal of the work running now, if it runs for a request (or a shared stream read). */
export function currentSignal(): AbortSignal | undefined {
  return current.getStore();
}

/**
 * The signal of work shared by several waiters (one read answering every request that asks the same):
 * aborted once every waiter that joined has gone, never while one still waits, nor ever when a waiter
 * without a signal (not a request) joined.
 */
export class SharedSignal {
  private readonly controller = new AbortController();
  private waiting = 0;
  private kept = false;

  get signal(): AbortSignal {
    return this.controller.signal;
  }

  join(waiter: AbortSignal | undefined): void {
    if (waiter === undefined) {
      this.kept = true;
      return;
    }
    if (waiter.aborted) return;
    this.waiting += 1;
    waiter.addEventListener(
      'abort',
      () => {
        this.waiting -= 1;
        if (this.waiting === 0 && !this.kept) this.controller.abort(waiter.reason);
      },
      { once: true },
    );
  }
}

/** What an abandoned wait rejects with: the DOMException `fetch` and `@clickhouse/client` use. */
export function abortError(signal: AbortSignal): unknown {
  return signal.reason instanceof Error ? signal.reason : new DOMException('This operation was aborted', 'AbortError');
}

/**
 * `promise`, or a rejection as soon as `signal` aborts. The promise itself runs on (what it holds is
 * released when it settles); its own rejection after the abort is taken here, never left unhandled.
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise;
  if (signal.aborted) {
    promise.catch(() => undefined);
    return Promise.reject(abortError(signal));
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      promise.catch(() => undefined);
      reject(abortError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/**
 * A fixed set of items (connections, read slots) lent one at a time, with a first-come queue of those
 * waiting for one, from which a waiter whose signal aborts is withdrawn at once: it never takes an item
 * it no longer wants. Written here because generic-pool's acquire cannot be withdrawn (a cancelled
 * caller still holds its place and is handed an item later), nor can p-limit's queued tasks.
 */
export class Lender<T> {
  private readonly idle: T[];
  private readonly queue: {
    readonly resolve: (item: T) => void;
    readonly reject: (error: unknown) => void;
    readonly signal: AbortSignal | undefined;
    readonly onAbort: () => void;
  }[] = [];
  private lentCount = 0;
  private withdrawnCount = 0;
  private closing: Error | null = null;
  private allBack: (() => void) | null = null;

  constructor(items: readonly T[]) {
    this.idle = [...items];
  }

  /** Callers waiting for an item now. */
  get waiting(): number {
    return this.queue.length;
  }

  /** Items out now. */
  get lent(): number {
    return this.lentCount;
  }

  /** Waiters withdrawn by their signal before they got an item, since the start. */
  get withdrawn(): number {
    return this.withdrawnCount;
  }

  /** An idle item at once, or the next one given back; rejects if `signal` aborts first. */
  borrow(signal?: AbortSignal): Promise<T> {
    if (this.closing !== null) return Promise.reject(this.closing);
    if (signal?.aborted) return Promise.reject(abortError(signal));
    const item = this.idle.pop();
    if (item !== undefined) {
      this.lentCount += 1;
      return Promise.resolve(item);
    }
    return new Promise<T>((resolve, reject) => {
      const waiter = {
        resolve,
        reject,
        signal,
        onAbort: () => {
          const at = this.queue.indexOf(waiter);
          if (at < 0) return;
          this.queue.splice(at, 1);
          this.withdrawnCount += 1;
          reject(abortError(signal!));
        },
      };
      this.queue.push(waiter);
      signal?.addEventListener('abort', waiter.onAbort, { once: true });
    });
  }

  giveBack(item: T): void {
    const next = this.queue.shift();
    if (next !== undefined) {
      next.signal?.removeEventListener('abort', next.onAbort);
      next.resolve(item);
      return;
    }
    this.lentCount -= 1;
    this.idle.push(item);
    if (this.lentCount === 0) this.allBack?.();
  }

  /** Lends `item` to `work` and takes it back once the work settles. */
  async with<R>(signal: AbortSignal | undefined, work: (item: T) => Promise<R>): Promise<R> {
    const item = await this.borrow(signal);
    try {
      return await work(item);
    } finally {
      this.giveBack(item);
    }
  }

  /** Refuses new borrowers and those waiting, waits for every item to come back, and returns them all. */
  async close(reason = new Error('closed')): Promise<T[]> {
    this.closing = reason;
    for (const waiter of this.queue.splice(0)) {
      waiter.signal?.removeEventListener('abort', waiter.onAbort);
      waiter.reject(reason);
    }
    if (this.lentCount > 0) await new Promise<void>((resolve) => (this.allBack = resolve));
    return this.idle.splice(0);
  }
}
