import { randomUUID } from 'node:crypto';
import type { Session } from './session.ts';

/** 2026-11-22T01:29:17.578Z: a fixed clock for tests. */
export const T0 = Date.UTC(2026, 10, 22, 1, 29, 17, 578);

/** An ACTIVE session started at T0; override any field. Test support only. */
export function makeSession(overrides: Partial<Session> = {}): Session {
  const id = overrides.id ?? randomUUID();
  return {
    id,
    room_name: `room-${id.slice(0, 8)}`,
    status: 'ACTIVE',
    started_at: T0,
    ended_at: null,
    duration: null,
    user_id: 'user-1',
    agent_id: null,
    session_data: {},
    agent_name: null,
    call_direction: null,
    outbound_phone_number: null,
    call_status: null,
    analysis: null,
    transferred_to: null,
    transfer_type: null,
    transfer_timestamp: null,
    created_at: T0,
    updated_at: T0,
    version: 1,
    ...overrides,
  };
}
