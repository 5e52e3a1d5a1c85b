import { randomUUID } from 'node:crypto';
import { AppError } from '../shared/errors.ts';
import type { Logger } from '../shared/logger.ts';
import type { RecordSink } from '../shared/records/record-sink.ts';
import { sessionEnvelope } from './session-record.ts';
import { endRoomSession, getSession, getSessionByRoom, updateSession, type SessionChange } from './sessions/session-commands.ts';
import { newSession, type NewSessionInput, type Session, type SessionUpdate } from './sessions/session.ts';
import type { SessionListQuery, SessionPage, SessionStore } from './sessions/session-store.ts';

export interface SessionServiceDeps {
  readonly store: SessionStore;
  readonly sink: RecordSink;
  readonly log: Logger;
  readonly now?: () => number;
}

/**
 * Every answered change is durable: a new session is published before it enters the live store;
 * an update is applied atomically to the live store, then published, and reverted there when the
 * broker refuses it (unless a later change already built on it, whose record then carries it).
 */
export function createSessionService({ store, sink, log, now = Date.now }: SessionServiceDeps) {
  const live = <T>(work: () => Promise<T>) => liveState(work, log);

  async function publishOrRevert(change: SessionChange): Promise<Session> {
    if (change.before === null) return change.session;
    const { before, session: after } = change;
    try {
      await sink.publish([sessionEnvelope(after, now())]);
      return after;
    } catch (error) {
      await store
        .update(after.id, (current) => (current.version === after.version ? { ...before, version: current.version + 1 } : null))
        .catch((revertError: unknown) => log.error({ err: revertError, session_id: after.id }, 'session_revert_failed'));
      throw error;
    }
  }

  return {
    async create(input: Omit<NewSessionInput, 'id'>): Promise<Session> {
      const session = newSession({ ...input, id: randomUUID() }, now());
      await sink.publish([sessionEnvelope(session, now())]);
      // Durable from here on: if the live store misses it, reads restore it from the history.
      await store.create(session).catch((error: unknown) => log.warn({ err: error, session_id: session.id }, 'session_live_write_failed'));
      return session;
    },
    update: async (id: string, update: SessionUpdate) => publishOrRevert(await live(() => updateSession(store, id, update, now()))),
    endByRoom: async (roomName: string) => publishOrRevert(await live(() => endRoomSession(store, roomName, now()))),
    get: (id: string) => live(() => getSession(store, id)),
    getByRoom: (roomName: string) => live(() => getSessionByRoom(store, roomName)),
    list: (userId: string, query: SessionListQuery): Promise<SessionPage> => live(() => store.list(userId, query)),
  };
}

export type SessionService = ReturnType<typeof createSessionService>;

/** A live store (or history) that does not answer is a 503, never a 500: the client may retry. */
async function liveState<T>(work: () => Promise<T>, log: Logger): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof AppError) throw error;
    log.warn({ err: error }, 'session_state_unavailable');
    throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Session state is unavailable; retry the request.', { cause: error, headers: { 'Retry-After': '1' } });
  }
}
