import type { ModelSchema } from '../../services/shared/validation/schema-dialect.ts';
import type { FromPySchema } from '../../services/shared/validation/schema-types.ts';

/**
 * POST /api/sessions/ — the old `SessionCreate` model. `metadata` is accepted as another name
 * for `session_data`; `status` is callmeter's extension (a session made before the call
 * connects starts CREATED). `room_name` is capped at the old column's 255 characters, where the
 * old service answered 500.
 */
export const sessionCreateBody = {
  type: 'object',
  title: 'SessionCreate',
  properties: {
    room_name: { 'x-py': 'str', maxLength: 255 },
    user_id: { 'x-py': 'str' },
    agent_id: { 'x-py': 'str', 'x-py-nullable': true },
    session_data: { 'x-py': 'dict', default: {} },
    status: { 'x-py': 'enum', enum: ['CREATED', 'ACTIVE'], default: 'ACTIVE' },
  },
  required: ['room_name', 'user_id'],
  'x-py-aliases': { session_data: ['metadata'] },
} as const satisfies ModelSchema;

export type SessionCreateBody = FromPySchema<typeof sessionCreateBody>;
