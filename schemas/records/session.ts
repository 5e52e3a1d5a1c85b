import type { FromSchema } from 'json-schema-to-ts';

/**
 * The session's shape, declared once. The values of its enums are listed here only: the request and
 * response schemas (schemas/http/), the domain type and its mappings (services/ingest/sessions/session.ts),
 * the history columns and the fixtures all take them, or the whole field list, from this file.
 */

/** A live session: made before the call connects (CREATED) or a call in progress (ACTIVE). */
export const LIVE_SESSION_STATUSES = ['CREATED', 'ACTIVE'] as const;
/** Final is final: a late or replayed update never reopens a call billed as ended. */
export const FINAL_SESSION_STATUSES = ['COMPLETED', 'FAILED'] as const;
/** In lifecycle order: a session only moves forward along it, and never from a final status. */
export const SESSION_STATUSES = [...LIVE_SESSION_STATUSES, ...FINAL_SESSION_STATUSES] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];
export type LiveSessionStatus = (typeof LIVE_SESSION_STATUSES)[number];

export const CALL_DIRECTIONS = ['INBOUND', 'OUTBOUND'] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

export const CALL_STATUSES = ['RINGING', 'ANSWERED', 'COMPLETED', 'FAILED', 'NO_ANSWER'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export const TRANSFER_TYPES = ['WARM', 'COLD'] as const;
export type TransferType = (typeof TRANSFER_TYPES)[number];

/** The values of an enum, and null: the enum of a nullable field. */
export function orNull<const T extends readonly string[]>(values: T): readonly [...T, null] {
  return [...values, null] as const;
}

/** The values of an enum in lower case, as the old dashboard reads call_direction. */
export function lowerCase<const T extends readonly string[]>(values: T): { readonly [K in keyof T]: Lowercase<T[K]> } {
  return values.map((value) => value.toLowerCase()) as { readonly [K in keyof T]: Lowercase<T[K]> };
}

/**
 * The longest duration, in whole seconds, a session may carry: the old service's integer column, well
 * within the sessions table's UInt32 (a duration past that would wrap there and be listed wrong).
 */
export const MAX_DURATION_SECONDS = 2_147_483_647;

const nullableString = { type: ['string', 'null'] } as const;
const nullableDateTime = { type: ['string', 'null'], format: 'date-time' } as const;

/**
 * The whole state of a session after a change. Its key order is the order of the record, of the domain
 * type and of the history columns; `version` starts at 1 and grows by one with every change (stores
 * compare it to detect lost updates); `duration` is whole seconds. A date-time is epoch milliseconds in
 * the domain, an object is JSON text in ClickHouse.
 */
export const sessionRecordSchema = {
  $id: 'callmeter/records/session',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'room_name',
    'status',
    'started_at',
    'ended_at',
    'duration',
    'user_id',
    'agent_id',
    'session_data',
    'agent_name',
    'call_direction',
    'outbound_phone_number',
    'call_status',
    'analysis',
    'transferred_to',
    'transfer_type',
    'transfer_timestamp',
    'created_at',
    'updated_at',
    'version',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    room_name: { type: 'string' },
    status: { enum: SESSION_STATUSES },
    started_at: nullableDateTime,
    ended_at: nullableDateTime,
    duration: { type: ['integer', 'null'], minimum: 0 },
    user_id: { type: 'string' },
    agent_id: nullableString,
    session_data: { type: 'object' },
    agent_name: nullableString,
    call_direction: { enum: orNull(CALL_DIRECTIONS) },
    outbound_phone_number: nullableString,
    call_status: { enum: orNull(CALL_STATUSES) },
    analysis: { type: ['object', 'null'] },
    transferred_to: nullableString,
    transfer_type: { enum: orNull(TRANSFER_TYPES) },
    transfer_timestamp: nullableDateTime,
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export type SessionRecord = FromSchema<typeof sessionRecordSchema>;
export type SessionField = keyof typeof sessionRecordSchema.properties;
