import type { AgentRecord } from '../../domain/records/index.ts';
import { makeEnvelope, type Envelope } from '../../domain/records/index.ts';
import type { Agent } from './agent.ts';

/** The record of one version of an agent; keyed by agent id, as its telephony_number records are. */
export function agentEnvelope(agent: Agent, receivedAtMs: number): Envelope {
  const record: AgentRecord = {
    ...agent,
    config: { ...agent.config },
    created_at: new Date(agent.created_at).toISOString(),
    updated_at: new Date(agent.updated_at).toISOString(),
  };
  return makeEnvelope('agent', agent.id, record, new Date(agent.updated_at), new Date(receivedAtMs));
}
