/**
 * Gathers items submitted concurrently into one flush: everything submitted while a flush is in
 * flight goes out together in the next one (a "linger" as long as the previous flush). Each submit
 * resolves after the flush that carried its items succeeded, and rejects with that flush's error.
 */
export class MicroBatcher<T> {
  private queue: { items: readonly T[]; resolve: () => void; reject: (error: unknown) => void }[] = [];
  private flushing = false;
  private scheduled = false;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    private readonly maxItemsPerFlush = 10_000,
  ) {}

  submit(items: readonly T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ items, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything submitted so far has been flushed (or failed). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing || this.scheduled) await new Promise((resolve) => setTimeout(resolve, 5));
  }

  private schedule(): void {
    if (this.flushing || this.scheduled) return;
    this.scheduled = true;
    // setImmediate lets every request already parsed in this turn join the same flush.
    setImmediate(() => {
      this.scheduled = false;
      void this.flushNext();
    });
  }

  private async flushNext(): Promise<void> {
    const batch = this.take();
    if (batch.length === 0) return;
    this.flushing = true;
    try {
      await this.flush(batch.flatMap((entry) => entry.items));
      for (const entry of batch) entry.resolve();
    } catch (error) {
      for (const entry of batch) entry.reject(error);
    } finally {
      this.flushing = false;
      if (this.queue.length > 0) this.schedule();
    }
  }

  private take(): typeof this.queue {
    let count = 0;
    let end = 0;
    while (end < this.queue.length && (end === 0 || count + this.queue[end]!.items.length <= this.maxItemsPerFlush)) {
      count += this.queue[end]!.items.length;
      end += 1;
    }
    return this.queue.splice(0, end);
  }
}
