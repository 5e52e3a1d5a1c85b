import type { FromSchema } from 'json-schema-to-ts';

/**
 * One turn of a call's transcript. `id` is made at ingest and identifies the turn: a redelivery of
 * the record stores it once (the table replaces by it). Keyed by session id, on the sessions topic,
 * so a session's records stay in one partition.
 */
export const transcriptRecordSchema = {
  $id: 'callmeter/records/transcript',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'session_id', 'content', 'speaker', 'timestamp'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    session_id: { type: 'string', minLength: 1, maxLength: 512 },
    content: { type: 'string' },
    speaker: { enum: ['USER', 'AGENT'] },
    timestamp: { type: 'string', format: 'date-time' },
  },
} as const;

export type TranscriptRecord = FromSchema<typeof transcriptRecordSchema>;
