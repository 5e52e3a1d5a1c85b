import type { ClickHouse } from '../shared/clickhouse/client.ts';
import type { LiveUsageEntry } from '../shared/redis/live-usage.ts';
import { eventKey, storedEventKeys } from '../shared/clickhouse/tables/usage-events.ts';

/**
 * The live counters' entries of a call that ClickHouse does not hold yet (the consumer writes the
 * counters after the insert, so normally none): the costs of a call in progress are a union by
 * event id, never a double count, whatever order the writers use. An entry whose event the
 * breakdown listed is stored; when the listing holds every stored event of the call, nothing is
 * looked up, else the entries it did not list are looked up among the call's tenant's stored ids (an event id is unique within its tenant only).
 */
export async function pendingLiveEntries(
  ch: ClickHouse,
  userId: string,
  entries: readonly LiveUsageEntry[],
  listed: ReadonlySet<string>,
  listingComplete: boolean,
): Promise<LiveUsageEntry[]> {
  const unlisted = entries.filter((entry) => !listed.has(entry.event_id));
  if (unlisted.length === 0 || listingComplete) return unlisted;
  const stored = await storedEventKeys(
    ch,
    unlisted.map((entry) => ({ user_id: userId, event_id: entry.event_id })),
  );
  return unlisted.filter((entry) => !stored.has(eventKey(userId, entry.event_id)));
}
