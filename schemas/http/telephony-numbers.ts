import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';

/**
 * POST /api/telephony/numbers/release — a named model (not an embedded `Body_...` parameter): a
 * body that is not an object is model_attributes_type, a missing `agent_id` echoes the object.
 */
export const numberReleaseBody = {
  type: 'object',
  title: 'NumberRelease',
  properties: {
    agent_id: { 'x-py': 'str' },
  },
  required: ['agent_id'],
} as const satisfies ModelSchema;

export type NumberReleaseBody = FromPySchema<typeof numberReleaseBody>;

/** POST /api/telephony/numbers/assign — the number is normalised (trimmed, leading `+`) by the route. */
export const numberAssignBody = {
  type: 'object',
  title: 'NumberAssign',
  properties: {
    // The agent id keys the number's records, which hold 1 to 512 characters.
    agent_id: { 'x-py': 'str', minLength: 1, maxLength: 512 },
    phone_number: { 'x-py': 'str' },
    provider: { 'x-py': 'str' },
  },
  required: ['agent_id', 'phone_number'],
} as const satisfies ModelSchema;

export type NumberAssignBody = FromPySchema<typeof numberAssignBody>;
