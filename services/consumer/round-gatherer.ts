/**
 * Gathers the batches kafkajs hands over for one fetch into one call of `store`: every eachBatch of a
 * fetch starts in the same turn (one worker each, partitionsConsumedConcurrently covering every
 * partition), enters here at once, and arrives once it is ready (its plan read). When no batch is
 * still getting ready and no round is being stored, everything that arrived goes to `store` together;
 * what arrives meanwhile waits for the next call. kafkajs fetches again only after every batch of a
 * fetch returned, so a call holds one fetch's batches.
 *
 * Written here because no library knows kafkajs's fetch rounds: this is a counter and a queue.
 */
export class RoundGatherer<T> {
  private preparing = 0;
  private waiting: T[] = [];
  private storing = false;
  private scheduled = false;

  constructor(private readonly store: (batches: T[]) => Promise<void>) {}

  /** A batch started getting ready: no round starts before it arrives. Called before its first await. */
  enter(): void {
    this.preparing += 1;
  }

  /** The batch that entered is ready (null: it has nothing to store in this round). */
  arrive(batch: T | null): void {
    this.preparing -= 1;
    if (batch !== null) this.waiting.push(batch);
    this.schedule();
  }

  private schedule(): void {
    if (this.storing || this.scheduled || this.preparing > 0 || this.waiting.length === 0) return;
    this.scheduled = true;
    // setImmediate lets the batches that entered in this turn arrive first.
    setImmediate(() => {
      this.scheduled = false;
      void this.start();
    });
  }

  private async start(): Promise<void> {
    if (this.storing || this.preparing > 0 || this.waiting.length === 0) return;
    const batches = this.waiting;
    this.waiting = [];
    this.storing = true;
    try {
      await this.store(batches);
    } finally {
      this.storing = false;
      this.schedule();
    }
  }
}
