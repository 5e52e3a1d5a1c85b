import type { ModelSchema } from '../../services/shared/validation/schema-dialect.ts';
import type { FromPySchema } from '../../services/shared/validation/schema-types.ts';

/**
 * `x_user_id: str = Header()`: absent is a `missing` item at ["header", "x-user-id"] with
 * `input: null`; an empty value is a valid string.
 */
export const userIdHeaders = {
  type: 'object',
  properties: { 'x-user-id': { 'x-py': 'str' } },
  required: ['x-user-id'],
} as const satisfies ModelSchema;

export type UserIdHeaders = FromPySchema<typeof userIdHeaders>;

/**
 * For routes that answer an absent or empty header with 401 `User ID required` themselves
 * (the cost and session-list routes, after their query is validated).
 */
export const optionalUserIdHeaders = {
  type: 'object',
  properties: { 'x-user-id': { 'x-py': 'str' } },
} as const satisfies ModelSchema;

export type OptionalUserIdHeaders = FromPySchema<typeof optionalUserIdHeaders>;

/** `{session_id}`: a plain `str`, so no value can fail (Starlette's `[^/]+`, percent-decoded). */
export const sessionIdPath = {
  type: 'object',
  properties: { session_id: { 'x-py': 'str' } },
  required: ['session_id'],
} as const satisfies ModelSchema;

export type SessionIdPath = FromPySchema<typeof sessionIdPath>;

export const roomNamePath = {
  type: 'object',
  properties: { room_name: { 'x-py': 'str' } },
  required: ['room_name'],
} as const satisfies ModelSchema;

export type RoomNamePath = FromPySchema<typeof roomNamePath>;

export const agentIdPath = {
  type: 'object',
  properties: { agent_id: { 'x-py': 'str' } },
  required: ['agent_id'],
} as const satisfies ModelSchema;

export type AgentIdPath = FromPySchema<typeof agentIdPath>;
