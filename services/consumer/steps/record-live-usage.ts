import type { UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import type { LiveUsageEntry, LiveUsageStore } from '../../shared/redis/live-usage.ts';

/**
 * Step 6, live usage: the stored usage rows of each call, written after the insert so that what calls
 * in progress show is always stored already. A failure fails the round's try (the retry's inserts are
 * dropped by their token, and the entries written again).
 */
export async function recordLiveUsage(liveUsage: LiveUsageStore, rows: readonly UsageEventRow[]): Promise<void> {
  const bySession = new Map<string, LiveUsageEntry[]>();
  for (const row of rows) {
    const entry = {
      event_id: row.id,
      provider: row.provider,
      service: row.service,
      event_type: row.event_type,
      unit: row.unit,
      quantity: row.quantity,
      cost: row.cost,
    };
    const entries = bySession.get(row.session_id);
    if (entries === undefined) bySession.set(row.session_id, [entry]);
    else entries.push(entry);
  }
  await Promise.all([...bySession].map(([sessionId, entries]) => liveUsage.record(sessionId, entries)));
}
