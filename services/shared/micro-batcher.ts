export interface MicroBatcherOptions<T> {
  /** Items in one flush; a single submit larger than this still goes out whole. */
  readonly maxItems?: number;
  /** Total weight (e.g. bytes) of one flush; a single submit heavier than this goes out alone. */
  readonly maxWeight?: number;
  readonly weigh?: (item: T) => number;
}

interface Entry<T> {
  readonly items: readonly T[];
  readonly weight: number;
  readonly resolve: () => void;
  readonly reject: (error: unknown) => void;
}

/**
 * Gathers items submitted concurrently into one flush: everything submitted while a flush is in
 * flight goes out together in the next one (a "linger" as long as the previous flush). Each submit
 * resolves after the flush that carried its items succeeded, and rejects with that flush's error.
 * A submit is never split across flushes; the limits only stop others from joining it, so one
 * oversized submit fails alone instead of failing everything gathered with it.
 */
export class MicroBatcher<T> {
  private queue: Entry<T>[] = [];
  private flushing = false;
  private scheduled = false;
  private readonly maxItems: number;
  private readonly maxWeight: number;
  private readonly weigh: (item: T) => number;

  constructor(
    private readonly flush: (items: T[]) => Promise<void>,
    { maxItems = 10_000, maxWeight = Number.POSITIVE_INFINITY, weigh = () => 0 }: MicroBatcherOptions<T> = {},
  ) {
    this.maxItems = maxItems;
    this.maxWeight = maxWeight;
    this.weigh = weigh;
  }

  submit(items: readonly T[]): Promise<void> {
    if (items.length === 0) return Promise.resolve();
    const weight = items.reduce((sum, item) => sum + this.weigh(item), 0);
    return new Promise<void>((resolve, reject) => {
      this.queue.push({ items, weight, resolve, reject });
      this.schedule();
    });
  }

  /** Resolves once everything submitted so far has been flushed (or failed). */
  async drain(): Promise<void> {
    while (this.queue.length > 0 || this.flushing || this.scheduled)
      await new Promise((resolve) => setTimeout(resolve, 5));
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

  /** The oldest submits that fit the limits together; at least one, so nothing waits forever. */
  private take(): Entry<T>[] {
    let count = 0;
    let weight = 0;
    let end = 0;
    for (const entry of this.queue) {
      const fits = count + entry.items.length <= this.maxItems && weight + entry.weight <= this.maxWeight;
      if (end > 0 && !fits) break;
      count += entry.items.length;
      weight += entry.weight;
      end += 1;
    }
    return this.queue.splice(0, end);
  }
}
