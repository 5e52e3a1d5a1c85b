import { TABLES } from '../../services/shared/clickhouse/tables.ts';
import { USAGE_ROLLUPS, type StoredTotals } from '../../services/consumer/stored-totals.ts';

export { storedTotals } from '../../services/consumer/stored-totals.ts';

/**
 * What storedTotals reads when every table holds `events` events costing `cost` in all, in `rows`
 * stored rows (more than the events once corrections add theirs).
 */
export function expectedTotals(events: number, cost: string, rows = events): StoredTotals {
  const n = String(events);
  return {
    usage_events: { n, cost },
    ...Object.fromEntries(USAGE_ROLLUPS.map((table) => [TABLES[table], { n, cost }])),
    [TABLES.usageEventIds]: { n: String(rows) },
  };
}
