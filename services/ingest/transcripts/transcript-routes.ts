import { transcriptListResponseSchema, transcriptResponseSchema } from '../../../schemas/http/responses.ts';
import { transcriptCreateBody, transcriptCreateByRoomBody } from '../../../schemas/http/transcript-create.ts';
import { WORKER_DATA } from '../../shared/auth/access.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { TranscriptService } from './transcript-service.ts';
import { toTranscriptResponse } from './transcript.ts';
import { ROOM_OF_SEVERAL_TENANTS } from '../sessions/session-routes.ts';

const routes = routeGroup({ tags: ['sessions'], access: WORKER_DATA });
/** A turn added to a session named by its id or its room (the room's latest session). */
const addTurn = routeGroup({
  tags: ['sessions'],
  access: WORKER_DATA,
  status: 201,
  responses: { 404: errorDoc('Unknown session (or room)', 'Session not found') },
  response: { schema: transcriptResponseSchema },
});

/** The old service's transcript routes: the worker posts each turn by room, the call page reads them. */
export function transcriptRoutes(transcripts: TranscriptService): Route[] {
  return [
    routes.get('/api/sessions/{session_id}/transcripts', {
      summary: 'A session’s transcript, oldest first (at most 10,000 turns)',
      response: { schema: transcriptListResponseSchema },
      handle: async ({ path, tenant }) => (await transcripts.list(path.session_id, tenant)).map(toTranscriptResponse),
    }),
    addTurn.post('/api/sessions/{session_id}/transcripts', {
      summary: 'Add a turn to a session’s transcript',
      request: { body: transcriptCreateBody },
      handle: async ({ path, body, tenant }) =>
        toTranscriptResponse(await transcripts.add(path.session_id, body, tenant)),
    }),
    addTurn.post('/api/sessions/by-room/{room_name}/transcripts', {
      summary: 'Add a turn to the transcript of the room’s latest session (of the tenant named, as by-room reads)',
      request: { body: transcriptCreateByRoomBody },
      responses: ROOM_OF_SEVERAL_TENANTS,
      handle: async ({ path, body, userId }) =>
        toTranscriptResponse(await transcripts.addByRoom(path.room_name, body, userId)),
    }),
  ];
}
