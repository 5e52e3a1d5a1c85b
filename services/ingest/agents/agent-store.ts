import type { Agent } from './agent.ts';

/**
 * Live state of agents: MemoryAgentStore (embedded mode, one process) and RedisAgentStore (shared by
 * every ingest process) pass agent-store.contract.ts. Agents do not expire here; the history
 * (ClickHouse) holds them too, and restores one the live store lost.
 */
export interface AgentStore {
  /** Throws AppError CONFLICT when an agent with this id exists. */
  create(agent: Agent): Promise<void>;
  get(id: string): Promise<Agent | null>;
  /**
   * Atomic read-modify-write: no concurrent update of one agent is lost. `mutate` may run more than
   * once (on contention), so it must be pure; it returns the next agent with `version` = current + 1,
   * or null for "no change". What it throws propagates, and nothing is written.
   */
  update(id: string, mutate: AgentMutation): Promise<AgentUpdateOutcome>;
  /** The ids of this tenant's active agents that this store holds (what the per-tenant cap counts). */
  activeIds(userId: string): Promise<string[]>;
  /**
   * Puts this agent into its tenant's active index when the store holds it active: agents written
   * before the index existed are not in it, and the cap would miss them.
   */
  indexActive(agent: Agent): Promise<void>;
}

export type AgentMutation = (current: Agent) => Agent | null;

export type AgentUpdateOutcome =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'unchanged'; readonly agent: Agent }
  | { readonly kind: 'changed'; readonly before: Agent; readonly after: Agent };
