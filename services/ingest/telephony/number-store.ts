import type { AgentNumber, AssignOutcome, AssignRequest, ReleaseOutcome } from './number-rules.ts';

/**
 * Which agent holds which number. MemoryNumberStore (embedded mode) and RedisNumberStore (shared
 * by every ingest process) pass number-store.contract.ts. Each operation is atomic: two agents
 * racing for one number cannot both get it, and one agent racing itself gets one number.
 */
export interface NumberStore {
  assign(request: AssignRequest): Promise<AssignOutcome>;
  release(agentId: string): Promise<ReleaseOutcome>;
  /** null: the agent never held a number. */
  get(agentId: string): Promise<AgentNumber | null>;
}
