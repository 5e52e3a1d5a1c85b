import { randomUUID } from 'node:crypto';
import type { SessionRecord, UsageRecord } from '../../services/domain/records/index.ts';
import { makeEnvelope, type Envelope } from '../../services/domain/records/index.ts';
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

/** A text-to-speech event of 100 characters (resemble, agent-1) of user-1 in a new session, now; override any field. */
export function makeUsageRecord(overrides: Partial<UsageRecord> = {}): UsageRecord {
  const now = new Date().toISOString();
  return {
    event_id: randomUUID(),
    session_id: randomUUID(),
    user_id: 'user-1',
    agent_id: 'agent-1',
    provider: 'resemble',
    event_type: 'tts_characters',
    model: null,
    quantity: '100',
    input_tokens: null,
    output_tokens: null,
    reported_unit_cost: null,
    reported_total_cost: null,
    occurred_at: now,
    received_at: now,
    ...overrides,
  };
}

/** makeUsageRecord's event in its envelope, keyed by its session; override any field of the record. */
export function makeUsageEnvelope(overrides: Partial<UsageRecord> = {}): Envelope {
  const record = makeUsageRecord(overrides);
  return makeEnvelope('usage', record.session_id, record, new Date(record.occurred_at), new Date(record.received_at));
}
