/**
 * Runs tasks one after another per key, in call order. The Redis store uses it so that updates of
 * one session from this process never race each other for the compare-and-set; only updates from
 * other processes do, which keeps the bounded retry loop far from its bound.
 */
export class KeyedQueue {
  private readonly tails = new Map<string, Promise<void>>();

  run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const result = previous.then(task);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.tails.set(key, tail);
    void tail.then(() => {
      if (this.tails.get(key) === tail) this.tails.delete(key);
    });
    return result;
  }

  /** Keys with work queued or running; empty when idle (nothing leaks per session). */
  get size(): number {
    return this.tails.size;
  }
}
