import type { FromSchema } from 'json-schema-to-ts';

const nullableString = { type: ['string', 'null'] } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;

/** The whole state of a session after a change; `version` grows by one with every change. */
export const sessionRecordSchema = {
  $id: 'callmeter/records/session',
  type: 'object',
  additionalProperties: false,
  required: [
    'id', 'room_name', 'status', 'started_at', 'ended_at', 'duration', 'user_id', 'agent_id', 'session_data', 'agent_name',
    'call_direction', 'outbound_phone_number', 'call_status', 'analysis', 'transferred_to', 'transfer_type', 'transfer_timestamp',
    'created_at', 'updated_at', 'version',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    room_name: { type: 'string' },
    status: { enum: ['CREATED', 'ACTIVE', 'COMPLETED', 'FAILED'] },
    started_at: nullableDateTime,
    ended_at: nullableDateTime,
    duration: { type: ['integer', 'null'], minimum: 0 },
    user_id: { type: 'string' },
    agent_id: nullableString,
    session_data: { type: 'object' },
    agent_name: nullableString,
    call_direction: { enum: ['INBOUND', 'OUTBOUND', null] },
    outbound_phone_number: nullableString,
    call_status: { enum: ['RINGING', 'ANSWERED', 'COMPLETED', 'FAILED', 'NO_ANSWER', null] },
    analysis: { type: ['object', 'null'] },
    transferred_to: nullableString,
    transfer_type: { enum: ['WARM', 'COLD', null] },
    transfer_timestamp: nullableDateTime,
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export type SessionRecord = FromSchema<typeof sessionRecordSchema>;
