import type { RateCard, RateEntry } from '../../../schemas/rate-card.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import {
  readRateEntryChanges,
  type RateEntryChanges,
  type StoredRate,
} from '../../shared/clickhouse/tables/rate-entries.ts';
import type { Logger } from '../../shared/logger.ts';
import { cardWithTenantIndex, TenantRateIndex } from './tenant-rate-index.ts';

/** How often every pricing process reads the tenants' entries: a new one applies within this plus the store's lag (docs/pricing.md: within 5 s). */
export const TENANT_RATES_REFRESH_MS = 2_000;

/** A tenant entry as the card's lookups take it; the card's own fields only. */
export function toCardEntry(rate: StoredRate): RateEntry {
  return {
    id: rate.id,
    ...(rate.event_type === null ? {} : { event_type: rate.event_type }),
    ...(rate.service === null ? {} : { service: rate.service }),
    provider: rate.provider,
    ...(rate.model === null ? {} : { model: rate.model }),
    user_id: rate.user_id,
    unit: rate.unit,
    price: rate.price,
    price_per: rate.price_per,
    pricing: rate.pricing,
    currency: rate.currency,
    effective_from: rate.effective_from,
    ...(rate.effective_to === null ? {} : { effective_to: rate.effective_to }),
  };
}

/**
 * How far before the store's clock at the last read the next read starts: a version stored (its stored_at
 * taken) before that read but visible only after it, as a slow insert's is, is still read. A change read
 * twice is a no-op (the highest version of an id wins).
 */
export const TENANT_RATES_OVERLAP_MS = 10_000;

export type ReadRateChanges = (sinceMs: number | null) => Promise<RateEntryChanges>;

/**
 * The rate card with the tenants' own entries, one per process (ingest for the 201's cost, the consumer,
 * the query service for quotes and listings share it), so a new entry applies everywhere within seconds,
 * with no restart. Every TENANT_RATES_REFRESH_MS it reads only the versions stored since its last read,
 * into an index by tenant. A failed read keeps the entries last read (and logs): pricing never stops
 * because the store is briefly unreachable.
 */
export class TenantRateCard {
  readonly index: TenantRateIndex;
  private readonly card: RateCard;
  private lastReadMs: number | null = null;
  private timer: NodeJS.Timeout | null = null;
  private reading: Promise<number> | null = null;

  constructor(
    base: RateCard,
    private readonly read: ReadRateChanges,
    private readonly log: Logger,
    now: () => number = Date.now,
  ) {
    this.index = new TenantRateIndex(base, now);
    this.card = cardWithTenantIndex(base, this.index);
  }

  /** Over the store's table: every pricing process's. */
  static over(base: RateCard, ch: ClickHouse, log: Logger): TenantRateCard {
    return new TenantRateCard(base, (sinceMs) => readRateEntryChanges(ch, sinceMs), log);
  }

  /** The card whose lookups read the tenants' entries: the same object for the process's life. */
  current(): RateCard {
    return this.card;
  }

  /** Reads what changed since the last read (everything the first time); resolves to the versions read. */
  refresh(): Promise<number> {
    // One read at a time: a slow read is not joined by the next tick's.
    this.reading ??= this.readChanges().finally(() => (this.reading = null));
    return this.reading;
  }

  private async readChanges(): Promise<number> {
    const since = this.lastReadMs === null ? null : this.lastReadMs - TENANT_RATES_OVERLAP_MS;
    const { changes, readMs } = await this.read(since);
    this.index.apply(changes.map(({ rate }) => ({ entry: toCardEntry(rate), version: rate.version })));
    this.lastReadMs = Math.max(this.lastReadMs ?? readMs, readMs);
    return changes.length;
  }

  /** Reads once (a failure is thrown: a process does not start pricing without them), then every few seconds. */
  async start(): Promise<void> {
    await this.refresh();
    this.timer = setInterval(() => {
      this.refresh().catch((error: unknown) =>
        this.log.warn({ err: error }, 'tenant_rates_refresh_failed: pricing with the entries last read'),
      );
    }, TENANT_RATES_REFRESH_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
    this.timer = null;
  }
}
