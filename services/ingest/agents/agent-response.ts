import type { agentResponseSchema, phoneLookupResponseSchema } from '../../../schemas/http/responses.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import type { AgentView } from './agent-service.ts';
import type { Agent } from './agent.ts';

/**
 * The replaced service's AgentResponse, in its key order (AgentBase's fields first). `twilio_sid` is
 * always null: no carrier adapter here keeps one. `phone_number` is the number the agent holds now.
 */
export type AgentResponse = WireOf<typeof agentResponseSchema>;

export function toAgentResponse({ agent, phone_number }: AgentView): AgentResponse {
  return {
    name: agent.name,
    description: agent.description,
    type: agent.type,
    config: agent.config,
    id: agent.id,
    is_active: agent.is_active,
    user_id: agent.user_id,
    phone_number,
    twilio_sid: null,
    created_at: new Date(agent.created_at).toISOString(),
    updated_at: new Date(agent.updated_at).toISOString(),
  };
}

/** GET /api/telephony/lookup: what the worker reads to answer a phone call. */
export function toPhoneLookupResponse(agent: Agent): WireOf<typeof phoneLookupResponseSchema> {
  return { agent_id: agent.id, name: agent.name, config: agent.config };
}
