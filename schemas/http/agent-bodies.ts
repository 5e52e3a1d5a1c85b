import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';

/** The replaced service's AgentType. */
export const AGENT_TYPES = ['STT', 'LLM', 'TTS', 'PIPELINE'] as const;

// Every change publishes the whole agent as one record, so each string a client sets is bounded
// (config at 64 KiB of JSON by the agent rules, services/ingest/agents/agent-limits.ts). `name` stops
// at the old column's 100 characters, where the old service answered 500.
const name = { 'x-py': 'str', maxLength: 100 } as const;
const description = { 'x-py': 'str', 'x-py-nullable': true, maxLength: 4096 } as const;

/** POST /api/agents/ — the old `AgentCreate`; `user_id` as sent is the owner and the tenant. */
export const agentCreateBody = {
  type: 'object',
  title: 'AgentCreate',
  properties: {
    name,
    description,
    type: { 'x-py': 'enum', enum: AGENT_TYPES },
    config: { 'x-py': 'dict', default: {} },
    user_id: { 'x-py': 'str', minLength: 1, maxLength: 512 },
  },
  required: ['name', 'type', 'user_id'],
} as const satisfies ModelSchema;

export type AgentCreateBody = FromPySchema<typeof agentCreateBody>;

/**
 * PATCH /api/agents/{agent_id} — the old `AgentUpdate`: every key optional, `config` replaced
 * whole. `name`, `config` and `is_active` are not nullable: the old columns were NOT NULL, so a
 * null there was a 500; here it is a 422.
 */
export const agentUpdateBody = {
  type: 'object',
  title: 'AgentUpdate',
  properties: {
    name,
    description,
    config: { 'x-py': 'dict' },
    is_active: { 'x-py': 'bool' },
  },
} as const satisfies ModelSchema;

export type AgentUpdateBody = FromPySchema<typeof agentUpdateBody>;

/** GET /api/telephony/lookup — `phone_number: str = Query(...)`. */
export const phoneLookupQuery = {
  type: 'object',
  properties: { phone_number: { 'x-py': 'str', description: 'The number called; normalised to E.164 as assign does' } },
  required: ['phone_number'],
} as const satisfies ModelSchema;

export type PhoneLookupQuery = FromPySchema<typeof phoneLookupQuery>;
