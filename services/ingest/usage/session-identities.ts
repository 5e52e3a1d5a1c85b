import type { Session } from '../sessions/session.ts';
import type { SessionStore } from '../sessions/session-store.ts';

/** What a usage event takes from its session: fields that no update changes (assertValidRevision). */
export type SessionIdentity = Pick<Session, 'id' | 'user_id' | 'agent_id'>;

/** Enough for the sessions of a large fleet's calls in progress, at about 200 bytes each. */
export const DEFAULT_MAX_IDENTITIES = 20_000;

/**
 * The identities of the sessions that usage events name, kept in this process: every event names a
 * session, and reading it from Redis for each one cost about a sixth of single-event ingest. Keeping
 * them is safe because a session's id, user and agent never change and a session, once created, is
 * never removed (Redis forgets ended ones, their ClickHouse history keeps them). An unknown session is
 * not kept, since another ingest process may create it a moment later, nor is a failed read, nor a
 * session without an agent (a second create for its room may fill it in).
 * Concurrent reads of one session share one store read. At most maxEntries are kept, oldest out first.
 */
export class SessionIdentities {
  private readonly entries = new Map<string, Promise<SessionIdentity | null>>();

  constructor(
    private readonly store: Pick<SessionStore, 'get'>,
    private readonly maxEntries = DEFAULT_MAX_IDENTITIES,
  ) {}

  read(id: string): Promise<SessionIdentity | null> {
    const kept = this.entries.get(id);
    if (kept !== undefined) return kept;
    const read = this.store.get(id).then((session) => (session === null ? null : { id: session.id, user_id: session.user_id, agent_id: session.agent_id }));
    this.entries.set(id, read);
    if (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value!);
    read.then(
      (identity) => {
        // A session without an agent may get one from a second create for its room: read it again.
        if (identity === null || identity.agent_id === null) this.forget(id, read);
      },
      () => this.forget(id, read),
    );
    return read;
  }

  private forget(id: string, read: Promise<SessionIdentity | null>): void {
    if (this.entries.get(id) === read) this.entries.delete(id);
  }
}
