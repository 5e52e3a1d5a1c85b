import { describe, expect, it } from 'vitest';
import type { SessionRow } from '../../shared/clickhouse/tables/sessions.ts';
import type { UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import { createLogger } from '../../shared/logger.ts';
import type { StoredAnnouncement, StoredAnnouncements } from '../../shared/redis/stored-announcements.ts';
import { announceStored } from './announce-stored.ts';

const log = createLogger('silent');
const usage = (user: string, session: string) => ({ user_id: user, session_id: session }) as UsageEventRow;
const session = (user: string, id: string) => ({ user_id: user, id }) as SessionRow;

function fakeAnnouncements(refuse = false) {
  const published: StoredAnnouncement[] = [];
  const announcements = {
    publish: async (announcement: StoredAnnouncement) => {
      if (refuse) throw new Error('redis down');
      published.push(announcement);
    },
  } as unknown as StoredAnnouncements;
  return { announcements, published };
}

describe('announceStored', () => {
  it('names each tenant and call the stored usage and sessions touched, once', async () => {
    const { announcements, published } = fakeAnnouncements();
    await announceStored(
      announcements,
      { usage: [usage('t1', 's1'), usage('t1', 's1'), usage('t2', 's2')], sessions: [session('t1', 's3')] },
      log,
    );
    expect(published).toEqual([{ tenants: ['t1', 't2'], sessions: ['s1', 's2', 's3'] }]);
  });

  it('says nothing of a round that stored neither, and never fails the round when the announcement fails', async () => {
    const quiet = fakeAnnouncements();
    await announceStored(quiet.announcements, { usage: [], sessions: [] }, log);
    expect(quiet.published).toEqual([]);
    const { announcements } = fakeAnnouncements(true);
    await expect(
      announceStored(announcements, { usage: [usage('t1', 's1')], sessions: [] }, log),
    ).resolves.toBeUndefined();
  });
});
