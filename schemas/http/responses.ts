import { CALL_DIRECTIONS, lowerCase, sessionRecordSchema } from '../records/session.ts';

/**
 * JSON Schemas of the success bodies, for the OpenAPI document (and the API fuzzer that checks
 * answers against it). Key order and types are those of compat.md.
 */
const nullable = (type: string, extra: Record<string, unknown> = {}) => ({
  anyOf: [{ type, ...extra }, { type: 'null' }],
});
const dateTime = { type: 'string', format: 'date-time' } as const;
const nullableEnum = (values: readonly string[]) => ({ anyOf: [{ type: 'string', enum: values }, { type: 'null' }] });

type FieldSchema = {
  readonly type?: string | readonly string[];
  readonly enum?: readonly unknown[];
  readonly [key: string]: unknown;
};

// The record's field schema in this document's dialect: null as an anyOf branch, an enum typed, an object open.
function responseField({ type, enum: values, ...extra }: FieldSchema): Record<string, unknown> {
  if (values !== undefined) {
    const strings = values.filter((value) => value !== null) as string[];
    return strings.length === values.length ? { type: 'string', enum: strings } : nullableEnum(strings);
  }
  const types = [type ?? []].flat();
  const [single] = types.filter((name) => name !== 'null');
  const open = single === 'object' ? { additionalProperties: true } : {};
  return types.includes('null') ? nullable(single!, { ...extra, ...open }) : { type: single, ...extra, ...open };
}

// The record's fields but version, in the replaced service's key order: session_data and id follow room_name.
const LEADING = ['room_name', 'session_data', 'id'];
const RECORD_FIELDS = [
  ...LEADING,
  ...Object.keys(sessionRecordSchema.properties).filter((name) => !LEADING.includes(name) && name !== 'version'),
];
const SESSION_FIELDS = {
  ...Object.fromEntries(
    RECORD_FIELDS.map((name) => [
      name,
      responseField(sessionRecordSchema.properties[name as keyof typeof sessionRecordSchema.properties]),
    ]),
  ),
  // Read by the old dashboard's types: call_direction in lower case, and session_data again.
  direction: nullableEnum(lowerCase(CALL_DIRECTIONS)),
  metadata: { type: 'object', additionalProperties: true },
};

export const sessionResponseSchema = {
  type: 'object',
  title: 'Session',
  properties: SESSION_FIELDS,
  required: Object.keys(SESSION_FIELDS),
} as const;

/** GET /api/sessions/{session_id}/analysis: whatever the worker stored as the analysis (an object from
 * callmeter's PATCH, any JSON value in session_data), or null. */
export const sessionAnalysisResponseSchema = { description: 'the analysis (an object), or null' } as const;

/** The old TranscriptResponse: one turn of a call. */
export const transcriptResponseSchema = {
  type: 'object',
  title: 'Transcript',
  properties: {
    content: { type: 'string' },
    speaker: { type: 'string', enum: ['USER', 'AGENT'] },
    id: { type: 'string', format: 'uuid' },
    session_id: { type: 'string' },
    timestamp: { type: 'string', format: 'date-time' },
  },
  required: ['content', 'speaker', 'id', 'session_id', 'timestamp'],
} as const;

export const transcriptListResponseSchema = { type: 'array', items: transcriptResponseSchema } as const;

export const sessionListResponseSchema = {
  type: 'object',
  title: 'SessionList',
  properties: {
    sessions: { type: 'array', items: sessionResponseSchema },
    total: { type: 'integer', minimum: 0 },
    page: { type: 'integer' },
    limit: { type: 'integer' },
  },
  required: ['sessions', 'total', 'page', 'limit'],
} as const;

export const numberReleasedSchema = {
  type: 'object',
  properties: { status: { const: 'released' }, phone_number: { type: 'string' } },
  required: ['status', 'phone_number'],
} as const;

export const numberAssignedSchema = {
  type: 'object',
  properties: {
    status: { const: 'assigned' },
    phone_number: { type: 'string' },
    agent_id: { type: 'string' },
    provider: { type: 'string' },
  },
  required: ['status', 'phone_number', 'agent_id', 'provider'],
} as const;

export const agentNumberSchema = {
  type: 'object',
  properties: {
    agent_id: { type: 'string' },
    phone_number: nullable('string'),
    provider: nullable('string'),
    assigned_at: nullable('string', { format: 'date-time' }),
  },
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
  properties: {
    agent_id: { type: 'string' },
    name: { type: 'string' },
    config: { type: 'object', additionalProperties: true },
  },
  required: ['agent_id', 'name', 'config'],
} as const;
