import type { Session } from '../sessions/session.ts';
import type {
  SessionListQuery,
  SessionMutation,
  SessionPage,
  SessionStore,
  SessionUpdateOutcome,
} from '../sessions/session-store.ts';
import type { SessionHistory } from './session-history.ts';
import { HistoryBacked } from './history-backed.ts';

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
  ) {
    super(live, history);
  }

  async getByRoom(roomName: string, userId: string | null): Promise<Session | null> {
    const live = await this.live.getByRoom(roomName, userId);
    const stored = await this.history.byRoom(roomName, userId);
    if (stored === null || (live !== null && live.created_at >= stored.created_at)) return live;
    return (await this.live.get(stored.id)) ?? this.restore(stored);
  }

  list(userId: string, query: SessionListQuery): Promise<SessionPage> {
    return this.history.list(userId, query);
  }

  withRoomLock<T>(userId: string, roomName: string, work: () => Promise<T>): Promise<T> {
    return this.live.withRoomLock(userId, roomName, work);
  }
}
