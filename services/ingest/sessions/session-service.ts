import { randomUUID } from 'node:crypto';
import type { Logger } from '../../shared/logger.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import { sessionEnvelope } from './session-record.ts';
import { changeQueue } from '../shared/keyed-queue.ts';
import {
  endSession,
  getSession,
  getSessionByRoom,
  joinSession,
  newBoundedSession,
  updateSession,
  type SessionChange,
} from './session-commands.ts';
import { roomJoin } from './session-join.ts';
import type { NewSessionInput, Session, SessionUpdate } from './session.ts';
import type { SessionListQuery, SessionPage, SessionStore } from './session-store.ts';
import { liveStateRunner } from '../shared/live-state.ts';
import { assertActsFor, ownedBy } from '../../shared/auth/tenant.ts';
import { SESSION_NOT_FOUND } from './session-commands.ts';
import { assertInstantsInWindow } from './session-instants.ts';

/** USAGE_MAX_AGE_DAYS's default: the service is built with the configured one. */
const DEFAULT_MAX_AGE_MS = 35 * 86_400_000;

export interface SessionServiceDeps {
  readonly store: SessionStore;
  readonly sink: RecordSink;
  readonly log: Logger;
  readonly now?: () => number;
  /** How far back a reported ended_at may lie (USAGE_MAX_AGE_DAYS, the window of usage timestamps). */
  readonly maxAgeMs?: number;
  /** Refuses a new call whose scope's blocking budget is spent (a 402); joining a running call is never refused. */
  readonly admit?: (userId: string, agentId: string | null) => Promise<void>;
}

/**
 * Every answered change is durable, and a refused one never takes effect: a new session is
 * published before it enters the live store; an update is applied atomically to the live store,
 * then published, and reverted there when the broker refuses it. Changes of one session from this
 * process run one at a time from apply to publish (or revert), so a change never builds on
 * another that is still unacknowledged and a revert restores exactly the state it replaced: two
 * changes in one failed send would otherwise leave the first one live under the second's revert.
 * Other sessions go on alongside. Another ingest process can still build on an unacknowledged
 * change; then the revert is skipped and the later change's record carries it.
 */
export function createSessionService({
  store,
  sink,
  log,
  now = Date.now,
  maxAgeMs = DEFAULT_MAX_AGE_MS,
  admit = async () => undefined,
}: SessionServiceDeps) {
  const live = liveStateRunner(log, {
    event: 'session_state_unavailable',
    detail: 'Session state is unavailable; retry the request.',
  });
  const inTurn = changeQueue(() => 'session');

  /** Runs one change of a session in its turn, through to the record or the revert. */
  const applyInTurn = (id: string, apply: () => Promise<SessionChange>) =>
    inTurn.run(id, async () => publishOrRevert(await live(apply)));

  async function publishOrRevert(change: SessionChange): Promise<Session> {
    if (change.before === null) return change.session;
    const { before, session: after } = change;
    try {
      await sink.publish([sessionEnvelope(after, now())]);
      return after;
    } catch (error) {
      await store
        .update(after.id, (current) =>
          current.version === after.version ? { ...before, version: current.version + 1 } : null,
        )
        .catch((revertError: unknown) =>
          log.error({ err: revertError, session_id: after.id }, 'session_revert_failed'),
        );
      throw error;
    }
  }

  async function get(id: string, tenant: string | null = null): Promise<Session> {
    return ownedBy(await live(() => getSession(store, id)), tenant, SESSION_NOT_FOUND);
  }

  /**
   * The room's latest session of the tenant the request names (`userId`: a bound credential's
   * tenant, else x-user-id): rooms belong to their tenant, and another tenant's session of the same
   * room name is never seen. No tenant named (AUTH_MODE=off or an unbound credential without
   * x-user-id): the room's latest session of any tenant, as the replaced service answered.
   */
  async function getByRoom(roomName: string, userId: string | null = null): Promise<Session> {
    return live(() => getSessionByRoom(store, roomName, userId));
  }

  return {
    /**
     * The room's live session of the same user (filled with what it lacked), else a new one; under
     * the lock of the user's room, so concurrent creates for a room make one session in every
     * process. Another tenant's session in a room of the same name is neither joined nor refused:
     * rooms belong to their tenant. A bound credential (`tenant`) creates for its own tenant only.
     */
    create: async (input: Omit<NewSessionInput, 'id'>, tenant: string | null = null): Promise<Session> => {
      assertActsFor(tenant, input.user_id, 'create a session');
      return live(() =>
        store.withRoomLock(input.user_id, input.room_name, async () => {
          const latest = await store.getByRoom(input.room_name, input.user_id);
          const join = roomJoin(latest, input);
          if (join.kind === 'join') return applyInTurn(latest!.id, () => joinSession(store, latest!.id, input, now()));
          await admit(input.user_id, input.agent_id ?? null);
          const session = newBoundedSession({ ...input, id: randomUUID() }, now());
          await sink.publish([sessionEnvelope(session, now())]);
          // Durable from here on: if the live store misses it, reads restore it from the history.
          await store
            .create(session)
            .catch((error: unknown) => log.warn({ err: error, session_id: session.id }, 'session_live_write_failed'));
          return session;
        }),
      );
    },
    /**
     * `tenant` (a bound credential's): another tenant's session is a 404, as an unknown one; a
     * session's user never changes. `offsetless`: the instants sent without an offset.
     */
    async update(
      id: string,
      update: SessionUpdate,
      tenant: string | null = null,
      offsetless: ReadonlySet<string> = new Set(),
    ): Promise<Session> {
      // With the body's validation: a 422 comes before the session is looked up.
      assertInstantsInWindow(update, { nowMs: now(), maxAgeMs }, offsetless);
      if (tenant !== null) await get(id, tenant);
      return applyInTurn(id, () => updateSession(store, id, update, now()));
    },
    /** The room as getByRoom finds it (`userId`: the tenant the request names, or null). */
    async endByRoom(roomName: string, userId: string | null = null): Promise<Session> {
      const latest = await getByRoom(roomName, userId);
      return applyInTurn(latest.id, () => endSession(store, latest.id, now()));
    },
    get,
    getByRoom,
    list: (userId: string, query: SessionListQuery): Promise<SessionPage> => live(() => store.list(userId, query)),
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
