/**
 * JSON Schemas of the success bodies, for the OpenAPI document (and the API fuzzer that checks
 * answers against it). Key order and types are those of compat.md.
 */
const nullable = (type: string, extra: Record<string, unknown> = {}) => ({ anyOf: [{ type, ...extra }, { type: 'null' }] });
const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableEnum = (values: readonly string[]) => ({ anyOf: [{ type: 'string', enum: values }, { type: 'null' }] });

const SESSION_FIELDS = {
  room_name: { type: 'string' },
  session_data: { type: 'object', additionalProperties: true },
  id: { type: 'string', format: 'uuid' },
  status: { type: 'string', enum: ['CREATED', 'ACTIVE', 'COMPLETED', 'FAILED'] },
  started_at: nullable('string', { format: 'date-time' }),
  ended_at: nullable('string', { format: 'date-time' }),
  duration: nullable('integer', { minimum: 0 }),
  user_id: { type: 'string' },
  agent_id: nullable('string'),
  agent_name: nullable('string'),
  call_direction: nullableEnum(['INBOUND', 'OUTBOUND']),
  outbound_phone_number: nullable('string'),
  call_status: nullableEnum(['RINGING', 'ANSWERED', 'COMPLETED', 'FAILED', 'NO_ANSWER']),
  analysis: nullable('object', { additionalProperties: true }),
  transferred_to: nullable('string'),
  transfer_type: nullableEnum(['WARM', 'COLD']),
  transfer_timestamp: nullable('string', { format: 'date-time' }),
  created_at: dateTime,
  updated_at: dateTime,
  // Read by the old dashboard's types: call_direction in lower case, and session_data again.
  direction: nullableEnum(['inbound', 'outbound']),
  metadata: { type: 'object', additionalProperties: true },
} as const;

export const sessionResponseSchema = {
  type: 'object',
  title: 'Session',
  properties: SESSION_FIELDS,
  required: Object.keys(SESSION_FIELDS),
} as const;

export const sessionListResponseSchema = {
  type: 'object',
  title: 'SessionList',
  properties: { sessions: { type: 'array', items: sessionResponseSchema }, total: { type: 'integer', minimum: 0 }, page: { type: 'integer' }, limit: { type: 'integer' } },
  required: ['sessions', 'total', 'page', 'limit'],
} as const;

export const numberReleasedSchema = {
  type: 'object',
  properties: { status: { const: 'released' }, phone_number: { type: 'string' } },
  required: ['status', 'phone_number'],
} as const;

export const numberAssignedSchema = {
  type: 'object',
  properties: { status: { const: 'assigned' }, phone_number: { type: 'string' }, agent_id: { type: 'string' }, provider: { type: 'string' } },
  required: ['status', 'phone_number', 'agent_id', 'provider'],
} as const;

export const agentNumberSchema = {
  type: 'object',
  properties: { agent_id: { type: 'string' }, phone_number: nullable('string'), provider: nullable('string'), assigned_at: nullable('string', { format: 'date-time' }) },
  required: ['agent_id', 'phone_number', 'provider', 'assigned_at'],
} as const;

const AGENT_FIELDS = {
  name: { type: 'string' },
  description: nullable('string'),
  type: { type: 'string', enum: ['STT', 'LLM', 'TTS', 'PIPELINE'] },
  config: { type: 'object', additionalProperties: true },
  id: { type: 'string' },
  is_active: { type: 'boolean' },
  user_id: { type: 'string' },
  phone_number: nullable('string'),
  twilio_sid: nullable('string'),
  created_at: dateTime,
  updated_at: dateTime,
} as const;

/** The replaced service's AgentResponse, in its key order. */
export const agentResponseSchema = {
  type: 'object',
  title: 'Agent',
  properties: AGENT_FIELDS,
  required: Object.keys(AGENT_FIELDS),
} as const;

export const agentListResponseSchema = { type: 'array', items: agentResponseSchema } as const;

export const phoneLookupResponseSchema = {
  type: 'object',
  properties: { agent_id: { type: 'string' }, name: { type: 'string' }, config: { type: 'object', additionalProperties: true } },
  required: ['agent_id', 'name', 'config'],
} as const;
