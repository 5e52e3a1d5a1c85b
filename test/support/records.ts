import { randomUUID } from 'node:crypto';
import type { SessionRecord } from '../../services/shared/records/payloads.ts';
import { makeEnvelope, type Envelope } from '../../services/shared/records/envelope.ts';

export function makeSessionRecord(overrides: Partial<SessionRecord> = {}): SessionRecord {
  const now = new Date().toISOString();
  return {
    id: randomUUID(),
    room_name: `room-${randomUUID()}`,
    status: 'ACTIVE',
    started_at: now,
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
    created_at: now,
    updated_at: now,
    version: 1,
    ...overrides,
  };
}

export function makeSessionEnvelope(overrides: Partial<SessionRecord> = {}): Envelope {
  const record = makeSessionRecord(overrides);
  const now = new Date();
  return makeEnvelope('session', record.id, record, now, now);
}
