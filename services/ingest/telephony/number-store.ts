import type { AgentNumber, AssignOutcome, AssignRequest, HeldNumber, ReleaseOutcome } from './number-rules.ts';

/**
 * Which agent holds which number. MemoryNumberStore (embedded mode) and RedisNumberStore (shared
 * by every ingest process) pass number-store.contract.ts. Each operation is atomic: two agents
 * racing for one number cannot both get it, and one agent racing itself gets one number.
 */
/** How long an agent that released its number stays known (400, not 404, on a second release); its history stays in ClickHouse. */
export const DEFAULT_RELEASED_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface NumberStoreOptions {
  readonly releasedRetentionMs?: number;
}

export interface NumberStore {
  assign(request: AssignRequest): Promise<AssignOutcome>;
  release(agentId: string): Promise<ReleaseOutcome>;
  /**
   * Undoes the first assignment of an agent (one whose outcome had `previous: null`): the agent is
   * unknown again and its number free. False, and nothing changed, if it no longer holds `held`.
   */
  forget(held: HeldNumber): Promise<boolean>;
  /** null: the agent never held a number. */
  get(agentId: string): Promise<AgentNumber | null>;
  /** The numbers of these agents that ever held one, in one read where the store can (the per-tenant cap). */
  getMany(agentIds: readonly string[]): Promise<AgentNumber[]>;
  /** The agent that holds this E.164 number now in this scope ('' for the unscoped), or null (GET /api/telephony/lookup). */
  holder(phoneNumber: string, scope?: string): Promise<string | null>;
  /** Every agent that holds this number now, in any scope (a lookup that names no tenant). */
  holders(phoneNumber: string): Promise<string[]>;
}
