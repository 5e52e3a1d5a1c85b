import { phoneLookupQuery } from '../../../schemas/http/agent-bodies.ts';
import {
  agentNumberSchema,
  numberAssignedSchema,
  numberReleasedSchema,
  phoneLookupResponseSchema,
} from '../../../schemas/http/responses.ts';
import { numberAssignBody, numberReleaseBody } from '../../../schemas/http/telephony-numbers.ts';
import { AppError } from '../../shared/errors.ts';
import { WORKER_DATA } from '../../shared/auth/access.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { AgentService } from '../agent-service.ts';
import { toPhoneLookupResponse } from '../agents/agent-response.ts';
import type { TelephonyService } from '../telephony-service.ts';
import { tooManyWaitingDoc } from './waiting-doc.ts';

const routes = routeGroup({ tags: ['telephony'], access: WORKER_DATA });
const AGENT_NOT_FOUND = errorDoc('The agent never held a number', 'Agent not found');
const TOO_MANY_WAITING = tooManyWaitingDoc('agent or number', 'agent');
// The replaced service had only POST routes under /numbers/: these names answer as it did.
const ACTIONS = new Set(['release', 'assign']);

export function telephonyRoutes(telephony: TelephonyService, agents: AgentService): Route[] {
  return [
    routes.post('/api/telephony/numbers/release', {
      summary: 'Release the phone number an agent holds',
      responses: {
        404: AGENT_NOT_FOUND,
        400: errorDoc('The agent holds no number', 'Agent has no assigned phone number'),
        ...TOO_MANY_WAITING,
      },
      request: { body: numberReleaseBody },
      response: { schema: numberReleasedSchema, example: { status: 'released', phone_number: '+15551230001' } },
      handle: async ({ body, tenant }) => {
        if (tenant !== null) await agents.get(body.agent_id, tenant);
        const released = await telephony.release(body.agent_id);
        return { status: 'released', phone_number: released.phone_number };
      },
    }),
    routes.post('/api/telephony/numbers/assign', {
      summary: 'Assign a phone number (E.164) to an agent',
      responses: {
        400: { description: 'The agent already holds a number' },
        409: { description: 'Another agent holds the number' },
        ...TOO_MANY_WAITING,
      },
      request: { body: numberAssignBody },
      response: { schema: numberAssignedSchema },
      handle: async ({ body, tenant }) => {
        if (tenant !== null) await agents.get(body.agent_id, tenant);
        const held = await telephony.assign({
          agent_id: body.agent_id,
          phone_number: body.phone_number,
          provider: body.provider ?? 'default',
        });
        return {
          status: 'assigned',
          phone_number: held.phone_number,
          agent_id: held.agent_id,
          provider: held.provider,
        };
      },
    }),
    routes.get('/api/telephony/numbers/{agent_id}', {
      summary: 'The phone number an agent holds',
      responses: { 404: AGENT_NOT_FOUND },
      response: { schema: agentNumberSchema },
      handle: async ({ path, tenant }) => {
        if (ACTIONS.has(path.agent_id))
          throw AppError.of('METHOD_NOT_ALLOWED', 'Method Not Allowed', { headers: { Allow: 'POST' } });
        if (tenant !== null) await agents.get(path.agent_id, tenant);
        const number = await telephony.get(path.agent_id);
        if (number === null) throw AppError.of('NOT_FOUND', 'Agent not found');
        const assignedAt = number.assigned_at === null ? null : new Date(number.assigned_at).toISOString();
        return {
          agent_id: number.agent_id,
          phone_number: number.phone_number,
          provider: number.provider,
          assigned_at: assignedAt,
        };
      },
    }),
    routes.get('/api/telephony/lookup', {
      summary: 'The active agent that holds a phone number (the worker answers a phone call with it)',
      responses: {
        404: errorDoc('No active agent holds the number', 'No agent found for this phone number'),
      },
      request: { query: phoneLookupQuery },
      response: {
        schema: phoneLookupResponseSchema,
        example: { agent_id: '3f0c…', name: 'Front desk', config: { system_prompt: 'Be brief.' } },
      },
      handle: async ({ query, tenant }) => toPhoneLookupResponse(await agents.lookup(query.phone_number, tenant)),
    }),
  ];
}
