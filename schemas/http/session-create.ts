import { LIVE_SESSION_STATUSES } from '../records/session.ts';
import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';

/**
 * POST /api/sessions/ — the old `SessionCreate` model. `metadata` is accepted as another name
 * for `session_data`; `status` is callmeter's extension (a session made before the call
 * connects starts CREATED). `room_name` is capped at the old column's 255 characters, where the
 * old service answered 500. `user_id` and `agent_id` are capped at 512 characters (as the telephony
 * agent_id): every change publishes the whole session as one record, so each string a client sets
 * is bounded, as session_data is (services/ingest/sessions/session-limits.ts).
 */
export const sessionCreateBody = {
  type: 'object',
  title: 'SessionCreate',
  properties: {
    room_name: { 'x-py': 'str', maxLength: 255 },
    user_id: { 'x-py': 'str', maxLength: 512 },
    agent_id: { 'x-py': 'str', 'x-py-nullable': true, maxLength: 512 },
    session_data: { 'x-py': 'dict', default: {} },
    status: { 'x-py': 'enum', enum: LIVE_SESSION_STATUSES, default: 'ACTIVE' },
  },
  required: ['room_name', 'user_id'],
  'x-py-aliases': { session_data: ['metadata'] },
} as const satisfies ModelSchema;

export type SessionCreateBody = FromPySchema<typeof sessionCreateBody>;
