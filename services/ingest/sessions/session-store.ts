import { AppError } from '../../shared/errors.ts';
import { isFinalStatus, type CallDirection, type Session } from './session.ts';

/**
 * Live state of sessions. Two implementations: MemorySessionStore (embedded mode, one process) and
 * RedisSessionStore (shared by every ingest process). Both pass session-store.contract.ts.
 * Sessions are kept for a retention period after their last change only (ended and idle ones alike,
 * see liveRetentionMs): the history lives in ClickHouse.
 */
export interface SessionStore {
  /** Throws AppError CONFLICT when a session with this id exists. */
  create(session: Session): Promise<void>;
  get(id: string): Promise<Session | null>;
  /**
   * The latest session created for this room by this tenant (`userId`), if any: two tenants may use
   * one room name at once. `userId` null: the room's latest session of any tenant (a request that
   * names no tenant, as the replaced service answered every one), and throws roomOfSeveralTenants
   * when the room has live (CREATED or ACTIVE) sessions of more than one tenant: the latest of any
   * would hand one tenant's transcripts and end to another's call.
   */
  getByRoom(roomName: string, userId: string | null): Promise<Session | null>;
  /**
   * Atomic read-modify-write: no concurrent update of the same session is lost. `mutate` may run
   * more than once (on contention), so it must be pure; it returns the next session with
   * `version` = current + 1, or null for "no change". What it throws propagates, and nothing is
   * written (the way to report a conflict).
   */
  update(id: string, mutate: SessionMutation): Promise<SessionUpdateOutcome>;
  /** A user's sessions, newest first by created_at (ties: higher id first). */
  list(userId: string, query: SessionListQuery): Promise<SessionPage>;
  /**
   * Runs `work` while no other call of this store (in any process sharing it) runs work for the
   * same tenant's room: one session per live room of a tenant is decided under it, from the room's
   * latest session to the new one's record and live write.
   */
  withRoomLock<T>(userId: string, roomName: string, work: () => Promise<T>): Promise<T>;
}

/**
 * One string per (tenant, room): the user id is URI-encoded, so it holds no ':' and the first ':'
 * separates the two whatever either contains.
 */
export function tenantRoom(userId: string, roomName: string): string {
  return `${encodeURIComponent(userId)}:${roomName}`;
}

/** The CONFLICT a by-room request naming no tenant gets when live sessions of several tenants hold the room. */
export function roomOfSeveralTenants(roomName: string): AppError {
  return AppError.of(
    'CONFLICT',
    `Room ${roomName} has live sessions of several users; name the user (x-user-id) whose session it is`,
  );
}

export type SessionMutation = (current: Session) => Session | null;

export type SessionUpdateOutcome =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'unchanged'; readonly session: Session }
  | { readonly kind: 'changed'; readonly before: Session; readonly after: Session };

export interface SessionListQuery {
  /** 1-based. */
  readonly page: number;
  readonly limit: number;
  /** Inclusive bounds on created_at, epoch milliseconds. */
  readonly start_ms?: number;
  readonly end_ms?: number;
  /** Only sessions with this call_direction. */
  readonly direction?: CallDirection;
}

export interface SessionPage {
  readonly sessions: readonly Session[];
  /** Sessions matching the bounds, on every page. */
  readonly total: number;
}

/** How long an ended session stays in the live store after its last change. */
export const DEFAULT_ENDED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;
/** How long a session not ended stays in the live store after its last change: a call never ended still goes. */
export const DEFAULT_IDLE_RETENTION_MS = 24 * 60 * 60 * 1000;

export interface SessionStoreOptions {
  readonly endedRetentionMs?: number;
  readonly idleRetentionMs?: number;
}

/** How long the live store keeps a session after this change of it; its history stays in ClickHouse. */
export function liveRetentionMs(session: Session, options: SessionStoreOptions): number {
  return isFinalStatus(session.status)
    ? (options.endedRetentionMs ?? DEFAULT_ENDED_RETENTION_MS)
    : (options.idleRetentionMs ?? DEFAULT_IDLE_RETENTION_MS);
}

/**
 * The stores index sessions by id, room, user and creation time, and detect lost updates by
 * version; a mutation that changes those would corrupt the indexes or defeat the check. Usage ingest
 * keeps a session's id, user and agent in memory (SessionIdentities): they may not change either,
 * except a missing agent_id, which a second create for the room fills once (SessionIdentities keeps
 * no identity without an agent).
 */
/** One mutation decided on the stored session: not found, unchanged, or a checked revision for the store to write. */
export function reviseSession(before: Session | null, mutate: SessionMutation): SessionUpdateOutcome {
  if (before === null) return { kind: 'not_found' };
  const after = mutate(before);
  if (after === null) return { kind: 'unchanged', session: before };
  assertValidRevision(before, after);
  return { kind: 'changed', before, after };
}

function assertValidRevision(before: Session, after: Session): void {
  const fixed = (['id', 'room_name', 'user_id', 'created_at'] as const).filter((key) => before[key] !== after[key]);
  const moved = before.agent_id === after.agent_id || before.agent_id === null ? fixed : [...fixed, 'agent_id'];
  if (moved.length > 0 || after.version !== before.version + 1) {
    throw AppError.of(
      'INTERNAL',
      `invalid session revision of ${before.id}: ${moved.length > 0 ? `changed ${moved.join(', ')}` : `version ${before.version} -> ${after.version}`}`,
    );
  }
}
