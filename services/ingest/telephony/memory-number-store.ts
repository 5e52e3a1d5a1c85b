import { decideAssign, decideRelease, releasedAgent } from './number-rules.ts';
import type { AgentNumber, AssignOutcome, AssignRequest, HeldNumber, ReleaseOutcome } from './number-rules.ts';
import { DEFAULT_RELEASED_RETENTION_MS, type NumberStore, type NumberStoreOptions } from './number-store.ts';

/**
 * One process: each operation reads, decides and writes within one synchronous step. An agent that
 * released its number is forgotten a retention later, as in Redis.
 */
export class MemoryNumberStore implements NumberStore {
  private readonly agents = new Map<string, AgentNumber>();
  private readonly holders = new Map<string, string>();
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
    const outcome = decideAssign(
      this.agents.get(request.agent_id) ?? null,
      this.holders.get(request.phone_number) ?? null,
      request,
    );
    if (outcome.kind === 'assigned') {
      this.agents.set(request.agent_id, outcome.assignment);
      this.releasedUntil.delete(request.agent_id);
      this.holders.set(request.phone_number, request.agent_id);
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
      if (this.holders.get(outcome.released.phone_number) === agentId)
        this.holders.delete(outcome.released.phone_number);
    }
    return outcome;
  }

  async forget(held: HeldNumber): Promise<boolean> {
    if (this.agents.get(held.agent_id)?.phone_number !== held.phone_number) return false;
    this.agents.delete(held.agent_id);
    if (this.holders.get(held.phone_number) === held.agent_id) this.holders.delete(held.phone_number);
    return true;
  }

  async get(agentId: string): Promise<AgentNumber | null> {
    this.forgetExpired();
    return this.agents.get(agentId) ?? null;
  }

  async holder(phoneNumber: string): Promise<string | null> {
    return this.holders.get(phoneNumber) ?? null;
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
