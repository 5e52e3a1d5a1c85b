import { sessionListQuery } from '../../../schemas/http/query-params.ts';
import {
  sessionAnalysisResponseSchema,
  sessionListResponseSchema,
  sessionResponseSchema,
} from '../../../schemas/http/responses.ts';
import { sessionCreateBody } from '../../../schemas/http/session-create.ts';
import { sessionUpdateBody, type SessionUpdateBody } from '../../../schemas/http/session-update.ts';
import { WORKER_DATA } from '../../shared/auth/access.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import { hadNoOffset } from '../../shared/validation/lax-datetime.ts';
import { nameSessionAgents, type AgentNames } from '../agents/session-agent-names.ts';
import type { SessionService } from './session-service.ts';
import { sessionAnalysis, toSessionResponse } from './session-response.ts';
import type { CallDirection, Session, SessionUpdate } from './session.ts';
import { dateRangeMs } from './date-range.ts';
import { tooManyWaitingDoc } from '../shared/waiting-doc.ts';

const routes = routeGroup({ tags: ['sessions'], access: WORKER_DATA });
const SESSION = { schema: sessionResponseSchema };
const NOT_FOUND = { 404: errorDoc('Unknown session', 'Session not found') };
const TOO_MANY_WAITING = tooManyWaitingDoc('session');
/** The by-room routes' answer when no tenant is named and the room is live in several. */
export const ROOM_OF_SEVERAL_TENANTS = {
  409: errorDoc(
    'No tenant named (AUTH_MODE=off without x-user-id, or an unbound key), and live sessions of several tenants hold the room',
    'Room room-1 has live sessions of several users; name the user (x-user-id) whose session it is',
  ),
};

/** In the replaced service's declaration order, which decides the Allow header of a 405. */
export function sessionRoutes(sessions: SessionService, agentNames: AgentNames): Route[] {
  // A session that carries no agent_name answers with its agent's name.
  const respond = async (session: Session) => toSessionResponse((await nameSessionAgents([session], agentNames))[0]!);
  return [
    routes.get('/api/sessions/', {
      summary: 'List the caller’s sessions, newest first',
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
    routes.post('/api/sessions/', {
      summary: 'Create a session, or answer the live session of the same user’s room',
      status: 201,
      responses: {
        402: errorDoc(
          'A blocking budget of the call’s tenant or agent is spent (docs/budgets.md); a running call is joined still',
          'Budget daily cap (0b6c…) of user tenant-1 is spent: 25.01 of 25 this day, until 2026-11-28T00:00:00.000Z; new calls are refused until it resets or is raised',
        ),
        429: errorDoc(
          'Too many creates of this room wait already (Retry-After)',
          'Too many creates of this room are waiting; retry later',
        ),
      },
      request: { body: sessionCreateBody },
      response: SESSION,
      handle: async ({ body, tenant }) => respond(await sessions.create(body, tenant)),
    }),
    routes.get('/api/sessions/by-room/{room_name}', {
      summary: 'The latest session of a room of the tenant named (credential or x-user-id), else of any tenant',
      responses: { ...NOT_FOUND, ...ROOM_OF_SEVERAL_TENANTS },
      response: SESSION,
      handle: async ({ path, userId }) => respond(await sessions.getByRoom(path.room_name, userId)),
    }),
    routes.post('/api/sessions/by-room/{room_name}/end', {
      summary: 'End the room’s ACTIVE session as COMPLETED',
      responses: { ...NOT_FOUND, ...ROOM_OF_SEVERAL_TENANTS, ...TOO_MANY_WAITING },
      response: SESSION,
      handle: async ({ path, userId }) => respond(await sessions.endByRoom(path.room_name, userId)),
    }),
    routes.get('/api/sessions/{session_id}', {
      summary: 'Read a session',
      responses: NOT_FOUND,
      response: SESSION,
      handle: async ({ path, tenant }) => respond(await sessions.get(path.session_id, tenant)),
    }),
    routes.get('/api/sessions/{session_id}/analysis', {
      summary: 'The post-call analysis of a session, or null',
      responses: NOT_FOUND,
      response: { schema: sessionAnalysisResponseSchema },
      handle: async ({ path, tenant }) => sessionAnalysis(await sessions.get(path.session_id, tenant)),
    }),
    routes.patch('/api/sessions/{session_id}', {
      summary: 'Update a session (status, end, call details)',
      responses: {
        ...NOT_FOUND,
        409: errorDoc('A move the lifecycle forbids', 'Cannot change session status from COMPLETED to ACTIVE'),
        ...TOO_MANY_WAITING,
      },
      request: { body: sessionUpdateBody },
      response: SESSION,
      handle: async ({ path, body, tenant }) =>
        respond(await sessions.update(path.session_id, toSessionUpdate(body), tenant, offsetlessFields(body))),
    }),
  ];
}

/** The datetimes of the body sent without an offset: their window allows for the sender's UTC offset. */
function offsetlessFields(body: SessionUpdateBody): ReadonlySet<string> {
  return new Set(
    Object.entries(body).flatMap(([key, value]) => (value instanceof Date && hadNoOffset(value) ? [key] : [])),
  );
}

// Datetimes become epoch milliseconds, the domain's unit; absent keys stay absent.
function toSessionUpdate(body: SessionUpdateBody): SessionUpdate {
  const given = Object.entries(body).filter(([, value]) => value !== undefined);
  return Object.fromEntries(
    given.map(([key, value]) => [key, value instanceof Date ? value.getTime() : value]),
  ) as SessionUpdate;
}
