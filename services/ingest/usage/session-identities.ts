import type { Session } from '../sessions/session.ts';
import type { SessionStore } from '../sessions/session-store.ts';

/**
 * What a usage event takes from its session: the fields no update changes (assertValidRevision), and
 * whether and when it ended and when it last changed, which an update may change and which are therefore
 * read again (refreshMs).
 */
const IDENTITY_FIELDS = ['id', 'user_id', 'agent_id', 'status', 'ended_at', 'updated_at'] as const;
export type SessionIdentity = Pick<Session, (typeof IDENTITY_FIELDS)[number]>;

/** Enough for the sessions of a large fleet's calls in progress, at about 200 bytes each. */
export const DEFAULT_MAX_IDENTITIES = 20_000;

/** How long a kept session's status and ended_at may be trusted before the store is asked again. */
export const DEFAULT_REFRESH_MS = 60_000;

/**
 * How long a kept session without an agent is trusted (refreshMs when that is shorter): a second create
 * for its room may fill its agent in through another ingest process, and the usage this process takes
 * meanwhile is stored without an agent, as its usage before that create was.
 */
export const AGENTLESS_REFRESH_MS = 1_000;

export interface SessionIdentitiesOptions {
  readonly maxEntries?: number;
  /** Kept no longer than the grace after a session's end, so that usage past an end another process recorded is taken for at most that long. */
  readonly refreshMs?: number;
  readonly now?: () => number;
}

interface Kept {
  readonly read: Promise<SessionIdentity | null>;
  readonly at: number;
  /** refreshMs, shortened once the read finds no agent. */
  trustedMs: number;
}

/**
 * The identities of the sessions that usage events name, kept in this process: every event names a
 * session, and reading it from Redis for each one cost about a sixth of single-event ingest. Id and
 * user never change, nor the agent once set, and a session, once created, is never removed (Redis
 * forgets ended ones, their ClickHouse history keeps them); its status and ended_at do change, so an
 * entry is read again once it is refreshMs old: a session that ended is known as such at most
 * refreshMs later. A session without an agent is kept for AGENTLESS_REFRESH_MS only: a second
 * create for its room may fill the agent in, and one made through another ingest process is then
 * seen that much later at most (through this process, at once: forgettingChanges). Usage taken
 * meanwhile, without an agent_id of its own, is stored without an agent: it counts in its tenant's
 * and its session's costs, not in an agent's (by-agent leaves agentless usage out), as the session's
 * usage before that create does. An unknown session is not kept, since another ingest process may
 * create it a moment later, nor is a failed read. Concurrent reads of one session share one store
 * read. At most maxEntries are kept, oldest out first.
 */
export class SessionIdentities {
  private readonly entries = new Map<string, Kept>();
  private readonly maxEntries: number;
  private readonly refreshMs: number;
  private readonly now: () => number;

  constructor(
    private readonly store: Pick<SessionStore, 'get'>,
    {
      maxEntries = DEFAULT_MAX_IDENTITIES,
      refreshMs = DEFAULT_REFRESH_MS,
      now = Date.now,
    }: SessionIdentitiesOptions = {},
  ) {
    this.maxEntries = maxEntries;
    this.refreshMs = refreshMs;
    this.now = now;
  }

  read(id: string): Promise<SessionIdentity | null> {
    const kept = this.entries.get(id);
    if (kept !== undefined && this.now() - kept.at < kept.trustedMs) return kept.read;
    return this.readAfresh(id);
  }

  /** The session as the store holds it now, kept from here on. */
  readAfresh(id: string): Promise<SessionIdentity | null> {
    const at = this.now();
    const read = this.store.get(id).then((session) => (session === null ? null : identityOf(session)));
    const entry: Kept = { read, at, trustedMs: this.refreshMs };
    this.entries.delete(id);
    this.entries.set(id, entry);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    read.then(
      (identity) => {
        if (identity === null) this.forget(id, entry);
        else if (identity.agent_id === null) entry.trustedMs = Math.min(AGENTLESS_REFRESH_MS, this.refreshMs);
      },
      () => this.forget(id, entry),
    );
    return read;
  }

  /** Drops the kept identity of a session that just changed, so that the next event reads it again. */
  forgetSession(id: string): void {
    this.entries.delete(id);
  }

  private forget(id: string, entry: Kept): void {
    if (this.entries.get(id) === entry) this.entries.delete(id);
  }
}

/**
 * The store as the session service uses it, telling the kept identities of every change it makes:
 * an end (or a moved end) recorded by this process is known to the next usage event at once.
 */
export function forgettingChanges(store: SessionStore, identities: SessionIdentities): SessionStore {
  return {
    create: (session) => store.create(session).finally(() => identities.forgetSession(session.id)),
    get: (id) => store.get(id),
    getByRoom: (roomName, userId) => store.getByRoom(roomName, userId),
    update: (id, mutate) => store.update(id, mutate).finally(() => identities.forgetSession(id)),
    list: (userId, query) => store.list(userId, query),
    withRoomLock: (userId, roomName, work) => store.withRoomLock(userId, roomName, work),
  };
}

function identityOf(session: Session): SessionIdentity {
  return Object.fromEntries(IDENTITY_FIELDS.map((field) => [field, session[field]])) as SessionIdentity;
}
