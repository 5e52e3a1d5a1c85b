import type { AGENT_TYPES } from '../../../schemas/http/agent-bodies.ts';
import { AppError } from '../../shared/errors.ts';
import type { JsonObject } from '../sessions/session.ts';
import { oversizedConfig } from './agent-limits.ts';

export type AgentType = (typeof AGENT_TYPES)[number];

/** An agent as the live store and the records hold it; datetimes as epoch ms, `version` from 1. */
export interface Agent {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly type: AgentType;
  readonly config: JsonObject;
  /** false once deleted: DELETE is a soft delete, as in the replaced service. */
  readonly is_active: boolean;
  /** The owner, and the tenant its calls are billed to. */
  readonly user_id: string;
  readonly created_at: number;
  readonly updated_at: number;
  readonly version: number;
}

export type NewAgentInput = Pick<Agent, 'id' | 'name' | 'description' | 'type' | 'config' | 'user_id'>;

/** What a PATCH may set; an absent key is left as it is, `config` is replaced whole. */
export interface AgentUpdate {
  readonly name?: string;
  readonly description?: string | null;
  readonly config?: JsonObject;
  readonly is_active?: boolean;
}

/** A new active agent; a config over its bound is a 422 at ["body","config"]. */
export function newAgent(input: NewAgentInput, nowMs: number): Agent {
  const tooLarge = oversizedConfig(input.config);
  if (tooLarge !== null) throw tooLarge;
  return { ...input, is_active: true, created_at: nowMs, updated_at: nowMs, version: 1 };
}

/** The next version of an agent, or null when the update changes nothing (then updated_at stays). */
export function applyAgentUpdate(agent: Agent, update: AgentUpdate, nowMs: number): Agent | null {
  if (update.config !== undefined) {
    const tooLarge = oversizedConfig(update.config);
    if (tooLarge !== null) throw tooLarge;
  }
  const next = { ...agent, ...definedOnly(update) };
  const changed = (Object.keys(update) as (keyof AgentUpdate)[]).some(
    (key) => update[key] !== undefined && !sameJson(agent[key], next[key]),
  );
  return changed ? { ...next, updated_at: Math.max(nowMs, agent.updated_at), version: agent.version + 1 } : null;
}

/** The id and owner never change: the stores index agents by them. */
export function assertValidAgentRevision(before: Agent, after: Agent): void {
  if (
    before.id !== after.id ||
    before.user_id !== after.user_id ||
    before.created_at !== after.created_at ||
    after.version !== before.version + 1
  ) {
    throw AppError.of('INTERNAL', `invalid agent revision of ${before.id}`);
  }
}

function definedOnly(update: AgentUpdate): AgentUpdate {
  return Object.fromEntries(Object.entries(update).filter(([, value]) => value !== undefined)) as AgentUpdate;
}

function sameJson(a: unknown, b: unknown): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}
