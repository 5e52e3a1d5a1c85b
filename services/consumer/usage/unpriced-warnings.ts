import type { UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import type { Logger } from '../../shared/logger.ts';

const HOUR_MS = 3_600_000;
/** Past this many remembered keys the memory starts again (a flood of made-up providers costs a log line each, once an hour). */
const REMEMBERED = 10_000;

/**
 * Nothing silently zero: one warning per unpriced provider and model an hour (per process), so that an
 * operator sees that a provider or model has no price before finance does. What was stored unpriced is
 * listed by GET /api/costs/unpriced.
 */
export class UnpricedWarnings {
  private readonly lastWarned = new Map<string, number>();

  constructor(
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  noteStored(
    rows: readonly (Pick<UsageEventRow, 'provider' | 'model' | 'event_type'> & { readonly cost_source: string })[],
  ): void {
    const at = this.now();
    for (const row of rows) {
      if (row.cost_source !== 'unpriced') continue;
      const { provider, model, event_type: eventType } = row;
      const key = `${provider}\u0000${model}\u0000${eventType}`;
      const last = this.lastWarned.get(key);
      if (last !== undefined && at - last < HOUR_MS) continue;
      if (this.lastWarned.size >= REMEMBERED) this.lastWarned.clear();
      this.lastWarned.set(key, at);
      this.log.warn(
        { provider, model: model === '' ? null : model, event_type: eventType },
        'usage_unpriced: no rate card entry, catalog price or reported cost; stored at cost 0 (GET /api/costs/unpriced lists it)',
      );
    }
  }
}
