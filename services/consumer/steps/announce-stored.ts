import type { SessionRow } from '../../shared/clickhouse/tables/sessions.ts';
import type { UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import type { Logger } from '../../shared/logger.ts';
import { announcementOf, type StoredAnnouncements } from '../../shared/redis/stored-announcements.ts';

/**
 * Step 7, announce: the tenants and calls the round's stored usage and sessions touched, for the live
 * cost streams. A hint: failing to give it delays a live message, never a round.
 */
export async function announceStored(
  announcements: StoredAnnouncements | null,
  stored: { readonly usage: readonly UsageEventRow[]; readonly sessions: readonly SessionRow[] },
  log: Logger,
): Promise<void> {
  const rows = [
    ...stored.usage.map((row) => ({ user_id: row.user_id, session: row.session_id })),
    ...stored.sessions.map((row) => ({ user_id: row.user_id, session: row.id })),
  ];
  if (announcements === null || rows.length === 0) return;
  await announcements.publish(announcementOf(rows)).catch((error: unknown) => {
    log.warn({ err: error }, 'stored_batch_not_announced');
  });
}
