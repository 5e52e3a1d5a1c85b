import { decideAssign, decideRelease, releasedAgent, scopeOf } from './number-rules.ts';
import type { AgentNumber, AssignOutcome, AssignRequest, HeldNumber, ReleaseOutcome } from './number-rules.ts';
import { DEFAULT_RELEASED_RETENTION_MS, type NumberStore, type NumberStoreOptions } from './number-store.ts';

/**
 * One process: each operation reads, decides and writes within one synchronous step. An agent that
 * released its number is forgotten a retention later, as in Redis.
 */
export class MemoryNumberStore implements NumberStore {
  private readonly agents = new Map<string, AgentNumber>();
  /** By scoped number (scopedNumber): the agent holding it. */
  private readonly holderOf = new Map<string, string>();
  /** Agents that released their number, by when they are forgotten; in release order, so expired ones lead. */
  private readonly releasedUntil = new Map<string, number>();
  private readonly releasedRetentionMs: number;
  private readonly now: () => number;

  constructor(options: NumberStoreOptions & { readonly now?: () => number } = {}) {
    this.releasedRetentionMs = options.releasedRetentionMs ?? DEFAULT_RELEASED_RETENTION_MS;
    this.now = options.now ?? Date.now;
  }

  async assign(request: AssignRequest): Promise<AssignOutcome> {
    this.forgetExpired();
    const key = scopedNumber(scopeOf(request), request.phone_number);
    const outcome = decideAssign(this.agents.get(request.agent_id) ?? null, this.holderOf.get(key) ?? null, request);
    if (outcome.kind === 'assigned') {
      this.agents.set(request.agent_id, outcome.assignment);
      this.releasedUntil.delete(request.agent_id);
      this.holderOf.set(key, request.agent_id);
    }
    return outcome;
  }

  async release(agentId: string): Promise<ReleaseOutcome> {
    this.forgetExpired();
    const outcome = decideRelease(this.agents.get(agentId) ?? null);
    if (outcome.kind === 'released') {
      this.agents.set(agentId, releasedAgent(agentId));
      this.releasedUntil.delete(agentId);
      this.releasedUntil.set(agentId, this.now() + this.releasedRetentionMs);
      this.unhold(outcome.released);
    }
    return outcome;
  }

  async forget(held: HeldNumber): Promise<boolean> {
    if (this.agents.get(held.agent_id)?.phone_number !== held.phone_number) return false;
    this.agents.delete(held.agent_id);
    this.unhold(held);
    return true;
  }

  async getMany(agentIds: readonly string[]): Promise<AgentNumber[]> {
    return (await Promise.all(agentIds.map((id) => this.get(id)))).filter((number) => number !== null);
  }

  async get(agentId: string): Promise<AgentNumber | null> {
    this.forgetExpired();
    return this.agents.get(agentId) ?? null;
  }

  async holder(phoneNumber: string, scope = ''): Promise<string | null> {
    return this.holderOf.get(scopedNumber(scope, phoneNumber)) ?? null;
  }

  async holders(phoneNumber: string): Promise<string[]> {
    return [...this.agents.values()].filter((a) => a.phone_number === phoneNumber).map((a) => a.agent_id);
  }

  private unhold(held: HeldNumber): void {
    const key = scopedNumber(scopeOf(held), held.phone_number);
    if (this.holderOf.get(key) === held.agent_id) this.holderOf.delete(key);
  }

  private forgetExpired(): void {
    const now = this.now();
    for (const [agentId, until] of this.releasedUntil) {
      if (until > now) break;
      this.releasedUntil.delete(agentId);
      this.agents.delete(agentId);
    }
  }
}

/** One string per (scope, number): the scope is URI-encoded, so the first ':' separates the two. */
function scopedNumber(scope: string, phoneNumber: string): string {
  return `${encodeURIComponent(scope)}:${phoneNumber}`;
}
