import {
  CALL_DIRECTIONS,
  CALL_STATUSES,
  MAX_DURATION_SECONDS,
  orNull,
  SESSION_STATUSES,
  TRANSFER_TYPES,
} from '../records/session.ts';
import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';

/**
 * PATCH /api/sessions/{session_id} — every key optional; `{}` changes nothing. The first four
 * are the interface's (not nullable there); the rest are the call details of the Session
 * resource, nullable as they are in it. `duration` stops at 2^31 - 1, where the old service's
 * integer column answered 500; `ended_at` and `transfer_timestamp` lie in the window of now (USAGE_MAX_AGE_DAYS
 * back, 5 minutes ahead: services/ingest/sessions/session-instants.ts). The strings stop at 512 characters, and `metadata` and `analysis` at
 * 64 KiB of JSON (checked by the session rules, services/ingest/sessions/session-limits.ts): every
 * change publishes the whole session as one record, which must keep fitting a Kafka request.
 */
export const sessionUpdateBody = {
  type: 'object',
  title: 'SessionUpdate',
  properties: {
    status: { 'x-py': 'enum', enum: SESSION_STATUSES },
    ended_at: { 'x-py': 'datetime' },
    duration: { 'x-py': 'int', minimum: 0, maximum: MAX_DURATION_SECONDS },
    metadata: { 'x-py': 'dict' },
    agent_name: { 'x-py': 'str', 'x-py-nullable': true, maxLength: 512 },
    call_direction: { 'x-py': 'enum', enum: orNull(CALL_DIRECTIONS) },
    call_status: { 'x-py': 'enum', enum: orNull(CALL_STATUSES) },
    outbound_phone_number: { 'x-py': 'str', 'x-py-nullable': true, maxLength: 512 },
    transferred_to: { 'x-py': 'str', 'x-py-nullable': true, maxLength: 512 },
    transfer_type: { 'x-py': 'enum', enum: orNull(TRANSFER_TYPES) },
    transfer_timestamp: { 'x-py': 'datetime', 'x-py-nullable': true },
    analysis: { 'x-py': 'dict' },
  },
} as const satisfies ModelSchema;

export type SessionUpdateBody = FromPySchema<typeof sessionUpdateBody>;
