import { tenantRoom } from '../sessions/session-store.ts';

/**
 * Every Redis key of the ingest service, built from the configured prefix (REDIS_KEY_PREFIX).
 * Callers never concatenate keys. Each family's name is not a prefix of another's followed by
 * the same separator, so no id, room or phone number can make two families collide.
 */
export interface IngestRedisKeys {
  /** Hash { version, session (JSON) }; expires a retention period after its last change (ended or idle). */
  session(id: string): string;
  /** Hash { id, created_at } of the latest session created for this room, of any tenant. */
  roomLatest(roomName: string): string;
  /** Hash { id, created_at } of the latest session created for this tenant's room. */
  tenantRoomLatest(userId: string, roomName: string): string;
  /** Hash { user_id: id of that tenant's latest session of the room }; outlives each session it names. */
  roomTenants(roomName: string): string;
  /** String: the token of the create that holds the tenant's room's lock; expires by itself. */
  tenantRoomLock(userId: string, roomName: string): string;
  /** Sorted set: the user's session ids scored by created_at (ms). */
  userSessions(userId: string): string;
  /** Sorted set: the user's ended session ids scored by the time their hash expires (ms). */
  userExpiring(userId: string): string;
  /** Hash { agent_id, phone_number, provider, assigned_at }; empty strings once released. */
  telephonyAgent(agentId: string): string;
  /** String: the agent that holds this E.164 number among the unscoped (AUTH_MODE=off, unknown agents). */
  telephonyNumber(phoneNumber: string): string;
  /** String: the agent that holds this E.164 number among the tenant's (`scope`) numbers. */
  tenantNumber(scope: string, phoneNumber: string): string;
  /** Set: every agent that holds this number, in any scope. */
  numberHolders(phoneNumber: string): string;
  /** Hash { version, agent (JSON) }; no TTL. */
  agent(agentId: string): string;
  /** Set: the ids of the tenant's active agents (the per-tenant cap counts them); no TTL. */
  tenantAgents(userId: string): string;
  /** String: the token of the correction that holds the tenant's usage event; expires by itself. */
  correctionLock(userId: string, eventId: string): string;
  /** String: the id of the correction last published for the tenant's usage event; expires an hour on. */
  correctionLast(userId: string, eventId: string): string;
}

export function createIngestRedisKeys(prefix: string): IngestRedisKeys {
  return {
    session: (id) => `${prefix}session:${id}`,
    roomLatest: (roomName) => `${prefix}session-room:${roomName}`,
    tenantRoomLatest: (userId, roomName) => `${prefix}tenant-room:${tenantRoom(userId, roomName)}`,
    roomTenants: (roomName) => `${prefix}room-tenants:${roomName}`,
    tenantRoomLock: (userId, roomName) => `${prefix}tenant-room-lock:${tenantRoom(userId, roomName)}`,
    userSessions: (userId) => `${prefix}user-sessions:${userId}`,
    userExpiring: (userId) => `${prefix}user-expiring:${userId}`,
    telephonyAgent: (agentId) => `${prefix}telephony-agent:${agentId}`,
    telephonyNumber: (phoneNumber) => `${prefix}telephony-number:${phoneNumber}`,
    tenantNumber: (scope, phoneNumber) => `${prefix}tenant-number:${encodeURIComponent(scope)}:${phoneNumber}`,
    numberHolders: (phoneNumber) => `${prefix}number-holders:${phoneNumber}`,
    agent: (agentId) => `${prefix}agent:${agentId}`,
    tenantAgents: (userId) => `${prefix}tenant-agents:${userId}`,
    correctionLock: (userId, eventId) => `${prefix}correction-lock:${eventId}:${userId}`,
    correctionLast: (userId, eventId) => `${prefix}correction-last:${eventId}:${userId}`,
  };
}
