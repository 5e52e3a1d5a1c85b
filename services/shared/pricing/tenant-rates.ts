import type { RateCard, RateEntry } from '../../../schemas/rate-card.ts';
import type { ClickHouse } from '../clickhouse/client.ts';
import { readRateEntries, type StoredRate } from '../clickhouse/tables/rate-entries.ts';
import type { Logger } from '../logger.ts';
import { withTenantEntries } from './load-rate-card.ts';

/** How often every pricing process reads the tenants' entries: a new one applies within this plus the store's lag (README: within 5 s). */
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
 * The rate card with the tenants' own entries, read again every TENANT_RATES_REFRESH_MS: every process
 * that prices (the consumer, the query service for quotes and listings, ingest for the 201's cost) holds one, so a new entry applies everywhere within
 * seconds, with no restart. A failed read keeps the entries last read (and logs): pricing never stops
 * because the store is briefly unreachable.
 */
export class TenantRateCard {
  private card: RateCard;
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly base: RateCard,
    private readonly ch: ClickHouse,
    private readonly log: Logger,
  ) {
    this.card = base;
  }

  current(): RateCard {
    return this.card;
  }

  async refresh(): Promise<void> {
    const entries = await readRateEntries(this.ch);
    this.card = withTenantEntries(this.base, entries.map(toCardEntry));
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
