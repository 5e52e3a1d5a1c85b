import { randomUUID } from 'node:crypto';
import type { SessionRecord } from '../../services/shared/records/payloads.ts';
import { makeEnvelope, type Envelope } from '../../services/shared/records/envelope.ts';
import { toSessionRecord } from '../../services/ingest/sessions/session-shape.ts';
import { newSession } from '../../services/ingest/sessions/session.ts';

/** An ACTIVE session of user-1 started now, in its record form; override any field. */
export function makeSessionRecord(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const session = newSession({ id: randomUUID(), room_name: `room-${randomUUID()}`, user_id: 'user-1' }, Date.now());
  return { ...toSessionRecord(session), ...overrides };
}

export function makeSessionEnvelope(overrides: Partial<SessionRecord> = {}): Envelope {
  const record = makeSessionRecord(overrides);
  const now = new Date();
  return makeEnvelope('session', record.id, record, now, now);
}
