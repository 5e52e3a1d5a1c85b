import { agentCreateBody, agentUpdateBody, type AgentUpdateBody } from '../../../schemas/http/agent-bodies.ts';
import { agentListResponseSchema, agentResponseSchema } from '../../../schemas/http/responses.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import type { AgentService } from '../agent-service.ts';
import type { AgentUpdate } from '../agents/agent.ts';
import { toAgentResponse } from '../agents/agent-response.ts';

const TAGS = ['agents'];
const AGENT = { schema: agentResponseSchema };
const NOT_FOUND = { 404: { description: 'Unknown agent', example: { detail: 'Agent not found' } } };
const TOO_MANY_WAITING = {
  429: {
    description: 'Too many changes of this agent wait already (Retry-After)',
    example: { detail: 'Too many changes of this agent are waiting; retry later' },
  },
};

/** The replaced service's agents router, in its declaration order (it decides the Allow header of a 405). */
export function agentRoutes(agents: AgentService): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/agents/',
      access: 'session_read',
      summary: 'The caller’s active agents, newest first',
      tags: TAGS,
      requireUserId: true,
      response: { schema: agentListResponseSchema },
      handle: async ({ userId }) => (await agents.list(userId!)).map(toAgentResponse),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/agents/{agent_id}',
      access: 'session_read',
      summary: 'Read an agent (also a deleted one, inactive)',
      tags: TAGS,
      responses: NOT_FOUND,
      response: AGENT,
      handle: async ({ path, tenant }) => toAgentResponse(await agents.get(path.agent_id, tenant)),
    }),
    defineRoute({
      method: 'POST',
      path: '/api/agents/',
      access: 'ingest',
      summary: 'Create an agent; user_id is its owner, whom its calls are billed to',
      tags: TAGS,
      status: 201,
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
    defineRoute({
      method: 'PATCH',
      path: '/api/agents/{agent_id}',
      access: 'ingest',
      summary: 'Update an agent (config is replaced whole)',
      tags: TAGS,
      responses: { ...NOT_FOUND, ...TOO_MANY_WAITING },
      request: { body: agentUpdateBody },
      response: AGENT,
      handle: async ({ path, body, tenant }) =>
        toAgentResponse(await agents.update(path.agent_id, toAgentUpdate(body), tenant)),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/agents/{agent_id}',
      access: 'ingest',
      summary: 'Delete an agent: it becomes inactive, leaves the list and its number’s lookup',
      tags: TAGS,
      status: 204,
      responses: { ...NOT_FOUND, ...TOO_MANY_WAITING },
      handle: async ({ path, tenant }) => agents.remove(path.agent_id, tenant),
    }),
  ];
}

function toAgentUpdate(body: AgentUpdateBody): AgentUpdate {
  return Object.fromEntries(Object.entries(body).filter(([, value]) => value !== undefined)) as AgentUpdate;
}
