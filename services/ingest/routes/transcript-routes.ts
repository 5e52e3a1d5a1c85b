import { transcriptListResponseSchema, transcriptResponseSchema } from '../../../schemas/http/responses.ts';
import { transcriptCreateBody, transcriptCreateByRoomBody } from '../../../schemas/http/transcript-create.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import type { TranscriptService } from '../transcript-service.ts';
import { toTranscriptResponse } from '../transcripts/transcript.ts';

const TAGS = ['sessions'];
const NOT_FOUND = { 404: { description: 'Unknown session (or room)', example: { detail: 'Session not found' } } };
const TURN = { schema: transcriptResponseSchema };

/** The old service's transcript routes: the worker posts each turn by room, the call page reads them. */
export function transcriptRoutes(transcripts: TranscriptService): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/sessions/{session_id}/transcripts',
      access: 'session_read',
      summary: 'A session’s transcript, oldest first (at most 10,000 turns)',
      tags: TAGS,
      response: { schema: transcriptListResponseSchema },
      handle: async ({ path, tenant }) => (await transcripts.list(path.session_id, tenant)).map(toTranscriptResponse),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/{session_id}/transcripts',
      access: 'ingest',
      summary: 'Add a turn to a session’s transcript',
      tags: TAGS,
      status: 201,
      responses: NOT_FOUND,
      request: { body: transcriptCreateBody },
      response: TURN,
      handle: async ({ path, body, tenant }) =>
        toTranscriptResponse(await transcripts.add(path.session_id, body, tenant)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/by-room/{room_name}/transcripts',
      access: 'ingest',
      summary: 'Add a turn to the transcript of the room’s latest session',
      tags: TAGS,
      status: 201,
      responses: NOT_FOUND,
      request: { body: transcriptCreateByRoomBody },
      response: TURN,
      handle: async ({ path, body, tenant }) =>
        toTranscriptResponse(await transcripts.addByRoom(path.room_name, body, tenant)),
    }),
  ];
}
