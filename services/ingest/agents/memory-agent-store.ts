import { AppError } from '../../shared/errors.ts';
import { assertValidAgentRevision, type Agent } from './agent.ts';
import type { AgentMutation, AgentStore, AgentUpdateOutcome } from './agent-store.ts';

/** One process: each operation reads, decides and writes within one synchronous step. */
export class MemoryAgentStore implements AgentStore {
  private readonly agents = new Map<string, Agent>();

  async create(agent: Agent): Promise<void> {
    if (this.agents.has(agent.id)) throw AppError.of('CONFLICT', `Agent ${agent.id} already exists`);
    this.agents.set(agent.id, agent);
  }

  async get(id: string): Promise<Agent | null> {
    return this.agents.get(id) ?? null;
  }

  async update(id: string, mutate: AgentMutation): Promise<AgentUpdateOutcome> {
    const before = this.agents.get(id);
    if (before === undefined) return { kind: 'not_found' };
    const after = mutate(before);
    if (after === null) return { kind: 'unchanged', agent: before };
    assertValidAgentRevision(before, after);
    this.agents.set(id, after);
    return { kind: 'changed', before, after };
  }

  /** The active agents are read from the agents themselves here: there is no index to heal. */
  async indexActive(_agent: Agent): Promise<void> {}

  async activeIds(userId: string): Promise<string[]> {
    return [...this.agents.values()].filter((a) => a.user_id === userId && a.is_active).map((a) => a.id);
  }
}
