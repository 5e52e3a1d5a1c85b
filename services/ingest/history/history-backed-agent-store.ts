import { AppError } from '../../shared/errors.ts';
import type { Agent } from '../agents/agent.ts';
import type { AgentMutation, AgentStore, AgentUpdateOutcome } from '../agents/agent-store.ts';
import type { AgentHistory } from './agent-history.ts';

/**
 * Live state first, history second, as for sessions: when the live store no longer holds an agent
 * (Redis was flushed, or an embedded process restarted), its latest stored version is read from
 * ClickHouse and put back into the live store before the call goes on. Listing reads the history.
 */
export class HistoryBackedAgentStore implements AgentStore {
  constructor(
    private readonly live: AgentStore,
    private readonly history: AgentHistory,
  ) {}

  create(agent: Agent): Promise<void> {
    return this.live.create(agent);
  }

  async get(id: string): Promise<Agent | null> {
    return (await this.live.get(id)) ?? this.restore(await this.history.byId(id));
  }

  async update(id: string, mutate: AgentMutation): Promise<AgentUpdateOutcome> {
    const outcome = await this.live.update(id, mutate);
    if (outcome.kind !== 'not_found') return outcome;
    return (await this.restore(await this.history.byId(id))) === null ? outcome : this.live.update(id, mutate);
  }

  /** Several agents at once, for naming: live state, then one history read for the rest (not restored). */
  async getMany(ids: readonly string[]): Promise<Agent[]> {
    const live = (await Promise.all(ids.map((id) => this.live.get(id)))).filter((agent) => agent !== null);
    const found = new Set(live.map((agent) => agent.id));
    return [...live, ...(await this.history.byIds(ids.filter((id) => !found.has(id))))];
  }

  active(userId: string): Promise<Agent[]> {
    return this.history.active(userId);
  }

  private async restore(agent: Agent | null): Promise<Agent | null> {
    if (agent === null) return null;
    try {
      await this.live.create(agent);
      return agent;
    } catch (error) {
      // Another request restored it first: the live copy wins, it may already be newer.
      if (error instanceof AppError && error.code === 'CONFLICT') return this.live.get(agent.id);
      throw error;
    }
  }
}
