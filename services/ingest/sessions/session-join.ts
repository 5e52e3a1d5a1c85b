import { isFinalStatus, type JsonObject, type Session } from './session.ts';

/** What a second create for a live room may add to the room's session. */
export interface RoomJoin {
  readonly user_id: string;
  readonly agent_id?: string | null;
  readonly session_data?: JsonObject;
}

export type RoomJoinResult = { readonly kind: 'new' } | { readonly kind: 'join' };

/**
 * One session per live room of a tenant: the dashboard's token route and the worker both create a
 * session for the room of one call. `latest` is the room's latest session of the creating user
 * (rooms belong to their tenant: another tenant's session of the same name is no business of this
 * one). A CREATED or ACTIVE one is joined; a room without one (never used, or every session ended)
 * gets a new one.
 */
export function roomJoin(latest: Session | null, join: RoomJoin): RoomJoinResult {
  if (latest === null || isFinalStatus(latest.status) || latest.user_id !== join.user_id) return { kind: 'new' };
  return { kind: 'join' };
}

/**
 * The joined session with what it lacked from the second create: its agent_id if it had none, and
 * the session_data keys it did not hold (the keys it holds keep their values). null when nothing is
 * missing, or when the session ended meanwhile (an ended session takes no more data from a create).
 */
export function fillFromJoin(current: Session, join: RoomJoin, nowMs: number): Session | null {
  if (isFinalStatus(current.status)) return null;
  const agentId = current.agent_id ?? join.agent_id ?? null;
  const missing = Object.entries(join.session_data ?? {}).filter(([key]) => !Object.hasOwn(current.session_data, key));
  if (agentId === current.agent_id && missing.length === 0) return null;
  return {
    ...current,
    agent_id: agentId,
    session_data: { ...current.session_data, ...Object.fromEntries(missing) },
    updated_at: nowMs,
    version: current.version + 1,
  };
}
