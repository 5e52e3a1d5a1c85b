import { sessionListQuery } from '../../../schemas/http/query-params.ts';
import {
  sessionAnalysisResponseSchema,
  sessionListResponseSchema,
  sessionResponseSchema,
} from '../../../schemas/http/responses.ts';
import { sessionCreateBody } from '../../../schemas/http/session-create.ts';
import { sessionUpdateBody, type SessionUpdateBody } from '../../../schemas/http/session-update.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import { nameSessionAgents, type AgentNames } from '../agents/session-agent-names.ts';
import type { SessionService } from '../session-service.ts';
import { sessionAnalysis, toSessionResponse } from '../sessions/session-response.ts';
import type { CallDirection, Session, SessionUpdate } from '../sessions/session.ts';
import { dateRangeMs } from './date-range.ts';

const TAGS = ['sessions'];
const SESSION = { schema: sessionResponseSchema };
const NOT_FOUND = { 404: { description: 'Unknown session', example: { detail: 'Session not found' } } };
const TOO_MANY_WAITING = {
  429: {
    description: 'Too many changes of this session wait already (Retry-After)',
    example: { detail: 'Too many changes of this session are waiting; retry later' },
  },
};

/** In the replaced service's declaration order, which decides the Allow header of a 405. */
export function sessionRoutes(sessions: SessionService, agentNames: AgentNames): Route[] {
  // A session that carries no agent_name answers with its agent's name.
  const respond = async (session: Session) => toSessionResponse((await nameSessionAgents([session], agentNames))[0]!);
  return [
    defineRoute({
      method: 'GET',
      path: '/api/sessions/',
      access: 'session_read',
      summary: 'List the caller’s sessions, newest first',
      tags: TAGS,
      request: { query: sessionListQuery },
      requireUserId: true,
      response: { schema: sessionListResponseSchema },
      handle: async ({ query, userId }, ctx) => {
        const range = dateRangeMs(query.start_date, query.end_date, ctx.query.end_date);
        const direction =
          query.direction === undefined ? {} : { direction: query.direction.toUpperCase() as CallDirection };
        const page = await sessions.list(userId!, { page: query.page, limit: query.limit, ...range, ...direction });
        return {
          sessions: (await nameSessionAgents(page.sessions, agentNames)).map(toSessionResponse),
          total: page.total,
          page: query.page,
          limit: query.limit,
        };
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/',
      access: 'ingest',
      summary: 'Create a session, or answer the room’s live session of the same user',
      tags: TAGS,
      status: 201,
      responses: {
        409: {
          description: 'The room has a live (CREATED or ACTIVE) session of another user',
          example: { detail: 'Room room-1 has a live session of another user' },
        },
      },
      request: { body: sessionCreateBody },
      response: SESSION,
      handle: async ({ body, tenant }) => respond(await sessions.create(body, tenant)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/by-room/{room_name}',
      access: 'session_read',
      summary: 'The latest session of a room',
      tags: TAGS,
      responses: NOT_FOUND,
      response: SESSION,
      handle: async ({ path, tenant }) => respond(await sessions.getByRoom(path.room_name, tenant)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/sessions/by-room/{room_name}/end',
      access: 'ingest',
      summary: 'End the room’s ACTIVE session as COMPLETED',
      tags: TAGS,
      responses: { ...NOT_FOUND, ...TOO_MANY_WAITING },
      response: SESSION,
      handle: async ({ path, tenant }) => respond(await sessions.endByRoom(path.room_name, tenant)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/{session_id}',
      access: 'session_read',
      summary: 'Read a session',
      tags: TAGS,
      responses: NOT_FOUND,
      response: SESSION,
      handle: async ({ path, tenant }) => respond(await sessions.get(path.session_id, tenant)),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/sessions/{session_id}/analysis',
      access: 'session_read',
      summary: 'The post-call analysis of a session, or null',
      tags: TAGS,
      responses: NOT_FOUND,
      response: { schema: sessionAnalysisResponseSchema },
      handle: async ({ path, tenant }) => sessionAnalysis(await sessions.get(path.session_id, tenant)),
    }),
    defineRoute({
      method: 'PATCH',
      path: '/api/sessions/{session_id}',
      access: 'ingest',
      summary: 'Update a session (status, end, call details)',
      tags: TAGS,
      responses: {
        ...NOT_FOUND,
        409: {
          description: 'A move the lifecycle forbids',
          example: { detail: 'Cannot change session status from COMPLETED to ACTIVE' },
        },
        ...TOO_MANY_WAITING,
      },
      request: { body: sessionUpdateBody },
      response: SESSION,
      handle: async ({ path, body, tenant }) =>
        respond(await sessions.update(path.session_id, toSessionUpdate(body), tenant)),
    }),
  ];
}

// Datetimes become epoch milliseconds, the domain's unit; absent keys stay absent.
function toSessionUpdate(body: SessionUpdateBody): SessionUpdate {
  const given = Object.entries(body).filter(([, value]) => value !== undefined);
  return Object.fromEntries(
    given.map(([key, value]) => [key, value instanceof Date ? value.getTime() : value]),
  ) as SessionUpdate;
}
