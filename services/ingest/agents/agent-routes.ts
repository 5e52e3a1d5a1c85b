import { AppError } from '../../shared/errors.ts';
import { agentCreateBody, agentUpdateBody, type AgentUpdateBody } from '../../../schemas/http/agent-bodies.ts';
import { agentListResponseSchema, agentResponseSchema } from '../../../schemas/http/responses.ts';
import { WORKER_DATA } from '../../shared/auth/access.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { AgentService } from './agent-service.ts';
import type { AgentUpdate } from './agent.ts';
import { toAgentResponse } from './agent-response.ts';
import { tooManyWaitingDoc } from '../shared/waiting-doc.ts';

const routes = routeGroup({ tags: ['agents'], access: WORKER_DATA });
const AGENT = { schema: agentResponseSchema };
const NOT_FOUND = { 404: errorDoc('Unknown agent', 'Agent not found') };
const TOO_MANY_WAITING = tooManyWaitingDoc('agent');
const AT_CAP = {
  409: errorDoc(
    'The user already holds AGENTS_PER_TENANT active agents',
    'This user has 100 active agents, the most one user may hold (AGENTS_PER_TENANT=100); delete one first',
  ),
};

/** The replaced service's agents router, in its declaration order (it decides the Allow header of a 405). */
/**
 * `releaseNumber`: what DELETE frees of the agent's number (the telephony service's release, which
 * publishes it); an agent without one answers NOT_FOUND or BAD_REQUEST, which DELETE ignores.
 */
export function agentRoutes(agents: AgentService, releaseNumber: (agentId: string) => Promise<unknown>): Route[] {
  return [
    routes.get('/api/agents/', {
      summary: 'The caller’s active agents, newest first',
      requireUserId: true,
      response: { schema: agentListResponseSchema },
      handle: async ({ userId }) => (await agents.list(userId!)).map(toAgentResponse),
    }),
    routes.get('/api/agents/{agent_id}', {
      summary: 'Read an agent (also a deleted one, inactive)',
      responses: NOT_FOUND,
      response: AGENT,
      handle: async ({ path, tenant }) => toAgentResponse(await agents.get(path.agent_id, tenant)),
    }),
    routes.post('/api/agents/', {
      summary: 'Create an agent; user_id is its owner, whom its calls are billed to',
      status: 201,
      responses: { ...AT_CAP, ...tooManyWaitingDoc('tenant') },
      request: { body: agentCreateBody },
      response: AGENT,
      handle: async ({ body, tenant }) =>
        toAgentResponse(
          await agents.create(
            {
              name: body.name,
              description: body.description ?? null,
              type: body.type,
              config: body.config,
              user_id: body.user_id,
            },
            tenant,
          ),
        ),
    }),
    routes.patch('/api/agents/{agent_id}', {
      summary: 'Update an agent (config is replaced whole)',
      // A deleted agent made active again counts against the cap as a create.
      responses: { ...NOT_FOUND, ...AT_CAP, ...TOO_MANY_WAITING },
      request: { body: agentUpdateBody },
      response: AGENT,
      handle: async ({ path, body, tenant }) =>
        toAgentResponse(await agents.update(path.agent_id, toAgentUpdate(body), tenant)),
    }),
    routes.delete('/api/agents/{agent_id}', {
      summary: 'Delete an agent: it becomes inactive, leaves the list, and releases its phone number',
      status: 204,
      responses: { ...NOT_FOUND, ...TOO_MANY_WAITING },
      handle: async ({ path, tenant }) => {
        await agents.remove(path.agent_id, tenant);
        // After the delete, so that a release that fails (503) is retried with the DELETE, which finds it again.
        await releaseNumber(path.agent_id).catch((error: unknown) => {
          if (!(error instanceof AppError && (error.code === 'NOT_FOUND' || error.code === 'BAD_REQUEST'))) throw error;
        });
      },
    }),
  ];
}

function toAgentUpdate(body: AgentUpdateBody): AgentUpdate {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) as AgentUpdate;
}
