import { AppError } from '../../shared/errors.ts';
import type { Session } from '../sessions/session.ts';
import type { SessionListQuery, SessionMutation, SessionPage, SessionStore, SessionUpdateOutcome } from '../sessions/session-store.ts';
import type { SessionHistory } from './session-history.ts';

/**
 * Live state first, history second: when the live store no longer holds a session (it expired after
 * the session ended, Redis was flushed, or an embedded process restarted), its latest stored
 * version is read from ClickHouse and put back into the live store before the call goes on.
 * Listing reads the history, which holds every session, not only the live ones.
 */
export class HistoryBackedSessionStore implements SessionStore {
  constructor(
    private readonly live: SessionStore,
    private readonly history: SessionHistory,
  ) {}

  create(session: Session): Promise<void> {
    return this.live.create(session);
  }

  async get(id: string): Promise<Session | null> {
    return (await this.live.get(id)) ?? this.restore(await this.history.byId(id));
  }

  async getByRoom(roomName: string): Promise<Session | null> {
    const live = await this.live.getByRoom(roomName);
    const stored = await this.history.byRoom(roomName);
    if (stored === null || (live !== null && live.created_at >= stored.created_at)) return live;
    return (await this.live.get(stored.id)) ?? this.restore(stored);
  }

  async update(id: string, mutate: SessionMutation): Promise<SessionUpdateOutcome> {
    const outcome = await this.live.update(id, mutate);
    if (outcome.kind !== 'not_found') return outcome;
    const restored = this.restore(await this.history.byId(id));
    return (await restored) === null ? outcome : this.live.update(id, mutate);
  }

  list(userId: string, query: SessionListQuery): Promise<SessionPage> {
    return this.history.list(userId, query);
  }

  withRoomLock<T>(roomName: string, work: () => Promise<T>): Promise<T> {
    return this.live.withRoomLock(roomName, work);
  }

  private async restore(session: Session | null): Promise<Session | null> {
    if (session === null) return null;
    try {
      await this.live.create(session);
      return session;
    } catch (error) {
      // Another request restored it first: the live copy wins, it may already be newer.
      if (error instanceof AppError && error.code === 'CONFLICT') return this.live.get(session.id);
      throw error;
    }
  }
}
