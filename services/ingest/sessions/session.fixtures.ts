import { randomUUID } from 'node:crypto';
import { newSession, type Session } from './session.ts';

/** 2026-11-22T01:29:17.578Z: a fixed clock for tests. */
export const T0 = Date.UTC(2026, 10, 22, 1, 29, 17, 578);

/** An ACTIVE session started at T0; override any field. Test support only. */
export function makeSession(overrides: Partial<Session> = {}): Session {
  const id = overrides.id ?? randomUUID();
  return { ...newSession({ id, room_name: `room-${id.slice(0, 8)}`, user_id: 'user-1' }, T0), ...overrides };
}
