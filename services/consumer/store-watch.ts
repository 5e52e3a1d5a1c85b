import { Counter, Gauge, Registry } from 'prom-client';

/**
 * What an operator's alert needs to see a stalled consumer before a customer does: per-partition lag,
 * store failures, how old the oldest fetched but unstored record is, and which partition has failed
 * to store one batch for longer than `stallAfterMs` (what /readyz reports).
 */
export class StoreWatch {
  readonly registry = new Registry();
  private readonly lag: Gauge<'topic' | 'partition'>;
  private readonly failures: Counter<'topic' | 'partition'>;
  /** Per partition: when its batch in flight was fetched, and the timestamp of its oldest record. */
  private readonly inFlight = new Map<string, { readonly oldestMs: number }>();
  /** Per partition: since when its batch in flight has been failing to store. */
  private readonly failingSince = new Map<string, number>();

  constructor(
    private readonly stallAfterMs: number,
    private readonly now: () => number = Date.now,
  ) {
    this.lag = new Gauge({
      name: 'consumer_lag_records',
      help: 'Records of a partition not yet stored and committed, as of its last fetch',
      labelNames: ['topic', 'partition'],
      registers: [this.registry],
    });
    this.failures = new Counter({
      name: 'consumer_store_failures_total',
      help: 'Failed attempts to store a batch, by partition',
      labelNames: ['topic', 'partition'],
      registers: [this.registry],
    });
    const oldestAgeMs = () => this.oldestUnstoredAgeMs();
    new Gauge({
      name: 'consumer_oldest_unstored_record_age_seconds',
      help: 'Age of the oldest record fetched and not yet stored (0 when none waits)',
      registers: [this.registry],
      collect() {
        this.set(oldestAgeMs() / 1000);
      },
    });
  }

  fetched(topic: string, partition: number, oldestRecordMs: number, lag: bigint): void {
    this.inFlight.set(key(topic, partition), { oldestMs: oldestRecordMs });
    this.lag.set({ topic, partition: String(partition) }, Number(lag));
  }

  failed(topic: string, partition: number): void {
    this.failures.inc({ topic, partition: String(partition) });
    if (!this.failingSince.has(key(topic, partition))) this.failingSince.set(key(topic, partition), this.now());
  }

  /** The batch was stored, or the partition left this consumer: either way it no longer waits here. */
  settled(topic: string, partition: number): void {
    this.inFlight.delete(key(topic, partition));
    this.failingSince.delete(key(topic, partition));
  }

  oldestUnstoredAgeMs(): number {
    let oldest = Number.POSITIVE_INFINITY;
    for (const { oldestMs } of this.inFlight.values()) oldest = Math.min(oldest, oldestMs);
    return oldest === Number.POSITIVE_INFINITY ? 0 : Math.max(0, this.now() - oldest);
  }

  /** The partitions whose batch has failed to store for longer than stallAfterMs, as a sentence; null when none. */
  stalled(): string | null {
    const stalled = [...this.failingSince].filter(([, since]) => this.now() - since > this.stallAfterMs);
    if (stalled.length === 0) return null;
    const [partition, since] = stalled[0]!;
    return `stalled: a batch of ${partition} has failed to store for ${Math.round((this.now() - since) / 1000)} s${stalled.length > 1 ? ` (and ${stalled.length - 1} more partitions)` : ''}`;
  }
}

function key(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}
