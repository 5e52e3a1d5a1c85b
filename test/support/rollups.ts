import { TABLES } from '../../services/shared/clickhouse/tables.ts';
import { expect } from 'vitest';
import type { ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { storedSessionCounts, USAGE_ROLLUPS, type StoredTotals } from '../../services/consumer/stored-totals.ts';

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

/**
 * Every session with usage counted once in each place that counts it (storedSessionCounts), `sessions`
 * of them when given; and every session under each agent likewise.
 */
export async function expectSessionsCountedOnce(ch: ClickHouse, sessions?: number, userId: string | null = null) {
  const counts = await storedSessionCounts(ch, userId);
  if (sessions === undefined) expect(counts.sessions).toBeGreaterThan(0);
  const n = sessions ?? counts.sessions;
  const agents = counts.agent_sessions;
  expect(agents).toBeGreaterThanOrEqual(n);
  expect(counts).toEqual({
    sessions: n,
    marked: n,
    starts: n,
    firsts: n,
    agent_sessions: agents,
    agent_marked: agents,
    agent_starts: agents,
    agent_firsts: agents,
  });
}
