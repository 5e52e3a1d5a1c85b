import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { Exact } from '../shared/exact-decimal.ts';
import type { LiveUsageEntry, LiveUsageStore } from '../shared/redis/live-usage.ts';
import { activeSessionsCost, storedEventIds } from './queries/session-costs.ts';

/**
 * The live counters' entries of these sessions that ClickHouse does not hold yet. The consumer
 * writes the counters after the insert, so today this is empty; reading it keeps the costs of a
 * call in progress a union by event id (never a double count) whatever order the writers use.
 */
export async function pendingLiveEntries(ch: ClickHouse, liveUsage: LiveUsageStore, sessionIds: readonly string[]): Promise<LiveUsageEntry[]> {
  const entries = (await Promise.all(sessionIds.map((id) => liveUsage.read(id)))).flat();
  if (entries.length === 0) return [];
  const stored = await storedEventIds(ch, entries.map((entry) => entry.event_id));
  return entries.filter((entry) => !stored.has(entry.event_id));
}

/**
 * What the user's calls in progress (sessions still ACTIVE) have cost so far: their stored events. The live counters are not
 * read here: the consumer writes them after the insert, so they never hold an event ClickHouse lacks,
 * and reading them would cost a Redis read of every event of every live call on each summary (about
 * 700 ms at 100,000 live events). The breakdown of one call still unions its counters by event id.
 */
export async function liveCost(ch: ClickHouse, userId: string): Promise<Exact> {
  return new Exact(await activeSessionsCost(ch, userId));
}
