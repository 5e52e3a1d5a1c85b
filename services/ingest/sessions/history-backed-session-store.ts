import { isFinalStatus, type Session } from './session.ts';
import {
  DEFAULT_IDLE_RETENTION_MS,
  roomOfSeveralTenants,
  type SessionListQuery,
  type SessionMutation,
  type SessionPage,
  type SessionStore,
  type SessionUpdateOutcome,
} from './session-store.ts';
import type { SessionHistory } from './session-history.ts';
import { HistoryBacked } from '../shared/history-backed.ts';

/**
 * Live state first, history second: when the live store no longer holds a session (it expired after
 * the session ended, Redis was flushed, or an embedded process restarted), its latest stored
 * version is read from ClickHouse and put back into the live store before the call goes on.
 * Listing reads the history, which holds every session, not only the live ones.
 */
export class HistoryBackedSessionStore
  extends HistoryBacked<Session, SessionMutation, SessionUpdateOutcome>
  implements SessionStore
{
  constructor(
    protected override readonly live: SessionStore,
    private readonly history: SessionHistory,
    private readonly now: () => number = Date.now,
  ) {
    super(live, history);
  }

  async getByRoom(roomName: string, userId: string | null): Promise<Session | null> {
    const live = await this.live.getByRoom(roomName, userId);
    const [stored, liveElsewhere] = await Promise.all([
      this.history.byRoom(roomName, userId),
      userId === null ? this.history.liveInRoom(roomName, this.now() - DEFAULT_IDLE_RETENTION_MS) : [],
    ]);
    if (userId === null) await this.assertOneLiveTenant(roomName, live, liveElsewhere);
    if (stored === null || (live !== null && live.created_at >= stored.created_at)) return live;
    return (await this.live.get(stored.id)) ?? this.restore(stored);
  }

  /**
   * The live store may have lost sessions the history still holds live (a restart, a flush), and the
   * history lags the live store: a session's live copy, where there is one, decides its status.
   */
  private async assertOneLiveTenant(
    roomName: string,
    live: Session | null,
    stored: readonly { id: string; user_id: string }[],
  ): Promise<void> {
    const tenants = new Set(live !== null && !isFinalStatus(live.status) ? [live.user_id] : []);
    const current = await Promise.all(stored.map(async (s) => ({ ...s, copy: await this.live.get(s.id) })));
    for (const { user_id, copy } of current) if (copy === null || !isFinalStatus(copy.status)) tenants.add(user_id);
    if (tenants.size > 1) throw roomOfSeveralTenants(roomName);
  }

  list(userId: string, query: SessionListQuery): Promise<SessionPage> {
    return this.history.list(userId, query);
  }

  withRoomLock<T>(userId: string, roomName: string, work: () => Promise<T>): Promise<T> {
    return this.live.withRoomLock(userId, roomName, work);
  }
}
