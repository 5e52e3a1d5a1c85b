import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';

/**
 * One turn of a transcript, at most this many characters: a turn is one utterance (a long one is a
 * few thousand characters), and every turn is one record on the sessions topic, far under its cap.
 */
export const MAX_TRANSCRIPT_CHARS = 32 * 1024;

const turn = {
  content: { 'x-py': 'str', maxLength: MAX_TRANSCRIPT_CHARS },
  speaker: { 'x-py': 'enum', enum: ['USER', 'AGENT'] },
} as const;

/** POST /api/sessions/by-room/{room_name}/transcripts — the old `TranscriptCreateByRoom`. */
export const transcriptCreateByRoomBody = {
  type: 'object',
  title: 'TranscriptCreateByRoom',
  properties: turn,
  required: ['content', 'speaker'],
} as const satisfies ModelSchema;

/**
 * POST /api/sessions/{session_id}/transcripts — the old `TranscriptCreate`, which also required a
 * `session_id` in the body; the path's session_id decides, as it did there.
 */
export const transcriptCreateBody = {
  type: 'object',
  title: 'TranscriptCreate',
  properties: { ...turn, session_id: { 'x-py': 'str', maxLength: 512 } },
  required: ['content', 'speaker', 'session_id'],
} as const satisfies ModelSchema;

export type TranscriptCreateByRoomBody = FromPySchema<typeof transcriptCreateByRoomBody>;
