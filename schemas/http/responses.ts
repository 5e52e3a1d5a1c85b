import { transcriptRecordSchema } from '../records/transcript.ts';
import { CALL_DIRECTIONS, lowerCase, orNull, sessionRecordSchema } from '../records/session.ts';
import { AGENT_TYPES } from './agent-bodies.ts';
import { arrayOf, closedObject, count, dateTime, jsonObject, nullable, oneOf, text } from './response-parts.ts';

/**
 * JSON Schemas of the success bodies of the session, transcript, agent and telephony routes, for the
 * OpenAPI document (and the tests and the API fuzzer that check answers against it) and the handlers'
 * types. Key order and types are those of compat.md.
 */

type RecordFields = typeof sessionRecordSchema.properties;
type WireField = Exclude<keyof RecordFields, 'version'>;

// The record's fields but version, in the replaced service's key order: session_data and id follow room_name.
const LEADING = ['room_name', 'session_data', 'id'] as const;
const RECORD_FIELDS = [
  ...LEADING,
  ...(Object.keys(sessionRecordSchema.properties) as (keyof RecordFields)[]).filter(
    (name) => !(LEADING as readonly string[]).includes(name) && name !== 'version',
  ),
] as WireField[];
const SESSION_FIELDS = {
  ...(Object.fromEntries(RECORD_FIELDS.map((name) => [name, sessionRecordSchema.properties[name]])) as {
    readonly [K in WireField]: RecordFields[K];
  }),
  // Read by the old dashboard's types: call_direction in lower case, and session_data again.
  direction: { enum: orNull(lowerCase(CALL_DIRECTIONS)) },
  metadata: jsonObject,
} as const;

export const sessionResponseSchema = closedObject(SESSION_FIELDS, { title: 'Session' });

/** GET /api/sessions/{session_id}/analysis: whatever the worker stored as the analysis (an object from
 * callmeter's PATCH, any JSON value in session_data), or null. */
export const sessionAnalysisResponseSchema = { description: 'the analysis (an object), or null' } as const;

/** The old TranscriptResponse: one turn of a call. */
export const transcriptResponseSchema = closedObject(
  {
    content: text,
    speaker: transcriptRecordSchema.properties.speaker,
    id: { type: 'string', format: 'uuid' },
    session_id: text,
    timestamp: dateTime,
  },
  { title: 'Transcript' },
);

export const transcriptListResponseSchema = arrayOf(transcriptResponseSchema);

export const sessionListResponseSchema = closedObject(
  { sessions: arrayOf(sessionResponseSchema), total: count, page: { type: 'integer' }, limit: { type: 'integer' } },
  { title: 'SessionList' },
);

export const numberReleasedSchema = closedObject({ status: { const: 'released' }, phone_number: text });

export const numberAssignedSchema = closedObject({
  status: { const: 'assigned' },
  phone_number: text,
  agent_id: text,
  provider: text,
});

export const agentNumberSchema = closedObject({
  agent_id: text,
  phone_number: nullable(text),
  provider: nullable(text),
  assigned_at: nullable(dateTime),
});

/** The replaced service's AgentResponse, in its key order. */
export const agentResponseSchema = closedObject(
  {
    name: text,
    description: nullable(text),
    type: oneOf(AGENT_TYPES),
    config: jsonObject,
    id: text,
    is_active: { type: 'boolean' },
    user_id: text,
    phone_number: nullable(text),
    twilio_sid: { ...nullable(text), description: 'always null: no carrier adapter here keeps one' },
    created_at: dateTime,
    updated_at: dateTime,
  },
  { title: 'Agent' },
);

export const agentListResponseSchema = arrayOf(agentResponseSchema);

export const phoneLookupResponseSchema = closedObject({ agent_id: text, name: text, config: jsonObject });
