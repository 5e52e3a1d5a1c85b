import { decideAssign, decideRelease, releasedAgent, type AgentNumber, type AssignOutcome, type AssignRequest, type HeldNumber, type ReleaseOutcome } from './number-rules.ts';
import type { NumberStore } from './number-store.ts';

/** One process: each operation reads, decides and writes within one synchronous step. */
export class MemoryNumberStore implements NumberStore {
  private readonly agents = new Map<string, AgentNumber>();
  private readonly holders = new Map<string, string>();

  async assign(request: AssignRequest): Promise<AssignOutcome> {
    const outcome = decideAssign(this.agents.get(request.agent_id) ?? null, this.holders.get(request.phone_number) ?? null, request);
    if (outcome.kind === 'assigned') {
      this.agents.set(request.agent_id, outcome.assignment);
      this.holders.set(request.phone_number, request.agent_id);
    }
    return outcome;
  }

  async release(agentId: string): Promise<ReleaseOutcome> {
    const outcome = decideRelease(this.agents.get(agentId) ?? null);
    if (outcome.kind === 'released') {
      this.agents.set(agentId, releasedAgent(agentId));
      if (this.holders.get(outcome.released.phone_number) === agentId) this.holders.delete(outcome.released.phone_number);
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
    return this.agents.get(agentId) ?? null;
  }

  async holder(phoneNumber: string): Promise<string | null> {
    return this.holders.get(phoneNumber) ?? null;
  }
}
