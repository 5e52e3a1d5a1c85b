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
import type { AgentService } from '../agents/agent-service.ts';
import { toPhoneLookupResponse } from '../agents/agent-response.ts';
import type { TelephonyService } from './telephony-service.ts';
import { agentHasNumber, type HeldNumber } from './number-rules.ts';
import { changeQueue } from '../shared/keyed-queue.ts';
import { tooManyWaitingDoc } from '../shared/waiting-doc.ts';

const routes = routeGroup({ tags: ['telephony'], access: WORKER_DATA });
const AGENT_NOT_FOUND = errorDoc('The agent never held a number', 'Agent not found');
const TOO_MANY_WAITING = tooManyWaitingDoc('agent or number', 'agent');
// The replaced service had only POST routes under /numbers/: these names answer as it did.
const ACTIONS = new Set(['release', 'assign']);

export interface TelephonyRouteOptions {
  /** NUMBERS_PER_TENANT; absent: no cap. */
  readonly numbersPerTenant?: number;
  /** AUTH_MODE=on: a known agent's number is unique among its tenant's numbers only. */
  readonly tenantNumbers?: boolean;
}

export function telephonyRoutes(
  telephony: TelephonyService,
  agents: AgentService,
  { numbersPerTenant = Infinity, tenantNumbers = false }: TelephonyRouteOptions = {},
): Route[] {
  // A tenant's assigns from this process run one at a time, so none passes the cap beside another.
  const tenantTurn = changeQueue(() => 'tenant');
  /**
   * The agent's owner is counted against NUMBERS_PER_TENANT. An agent callmeter does not know (an id
   * only an unbound credential or AUTH_MODE=off may name) has no owner to count, as before agents
   * existed here; a deleted agent may hold no number.
   */
  async function assignChecked(
    agentId: string,
    tenant: string | null,
    assign: (scope?: string) => Promise<HeldNumber>,
  ) {
    const agent = await agents.find(agentId, tenant);
    if (agent === null) {
      if (tenant !== null) throw AppError.of('NOT_FOUND', 'Agent not found');
      return assign();
    }
    if (!agent.is_active)
      throw AppError.of('BAD_REQUEST', `Agent ${agentId} is deleted; a deleted agent holds no number`);
    return tenantTurn.run(agent.user_id, async () => {
      // The documented 400 before the cap's 409: an agent holding a number would not add one.
      const current = await telephony.get(agentId);
      if (current?.phone_number != null) throw AppError.of('BAD_REQUEST', agentHasNumber(current.phone_number));
      const held = await agents.numbersHeld(agent.user_id);
      if (held >= numbersPerTenant)
        throw AppError.of(
          'CONFLICT',
          `This user's agents hold ${held} phone numbers, the most one user may hold (NUMBERS_PER_TENANT=${numbersPerTenant}); release one first`,
        );
      const assigned = await assign(tenantNumbers ? agent.user_id : undefined);
      // A DELETE of the agent may have run meanwhile (it marks the agent deleted, then releases): whichever
      // of the two comes second frees the number, so a deleted agent never keeps one.
      const after = await agents.find(agentId, tenant);
      if (after !== null && !after.is_active) {
        await telephony.release(agentId).catch(() => undefined);
        throw AppError.of('BAD_REQUEST', `Agent ${agentId} is deleted; a deleted agent holds no number`);
      }
      return assigned;
    });
  }

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
        404: errorDoc('The agent is not the bound credential’s tenant’s', 'Agent not found'),
        400: { description: 'The agent already holds a number, or is deleted' },
        409: { description: 'Another agent holds the number, or the tenant holds NUMBERS_PER_TENANT numbers' },
        ...TOO_MANY_WAITING,
      },
      request: { body: numberAssignBody },
      response: { schema: numberAssignedSchema },
      handle: async ({ body, tenant }) => {
        const held = await assignChecked(body.agent_id, tenant, (scope) =>
          telephony.assign({
            agent_id: body.agent_id,
            phone_number: body.phone_number,
            provider: body.provider ?? 'default',
            ...(scope === undefined ? {} : { scope }),
          }),
        );
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
      responses: {
        404: AGENT_NOT_FOUND,
        405: errorDoc('`release` and `assign` name POST routes, not an agent', 'Method Not Allowed'),
      },
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
      summary:
        'The active agent that holds a phone number (the worker answers a phone call with it): of the tenant named (bound credential or x-user-id), else of any tenant',
      responses: {
        404: errorDoc('No active agent (of the tenant named) holds the number', 'No agent found for this phone number'),
        409: errorDoc(
          'AUTH_MODE=on, no tenant named, and agents of several tenants hold the number',
          'Agents of several tenants hold +15551230001; name the tenant (x-user-id) whose agent to look up',
        ),
      },
      request: { query: phoneLookupQuery },
      response: {
        schema: phoneLookupResponseSchema,
        example: { agent_id: '3f0c…', name: 'Front desk', config: { system_prompt: 'Be brief.' } },
      },
      // No tenant named (AUTH_MODE=off, or an unbound credential, which reads any tenant's agents by
      // id too): the number's one active holder of any tenant.
      handle: async ({ query, userId }) => toPhoneLookupResponse(await agents.lookup(query.phone_number, userId)),
    }),
  ];
}
