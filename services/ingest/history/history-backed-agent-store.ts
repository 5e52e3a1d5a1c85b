import { AppError } from '../../shared/errors.ts';
import type { Agent } from '../agents/agent.ts';
import type { AgentMutation, AgentStore, AgentUpdateOutcome } from '../agents/agent-store.ts';
import type { AgentHistory } from './agent-history.ts';

const MISS_TTL_MS = 60_000;
const MAX_MISSES = 10_000;

/**
 * Live state first, history second, as for sessions: when the live store no longer holds an agent
 * (Redis was flushed, or an embedded process restarted), its latest stored version is read from
 * ClickHouse and put back into the live store before the call goes on. Listing reads the history.
 */
export class HistoryBackedAgentStore implements AgentStore {
  private readonly misses = new Map<string, number>();

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

  /**
   * Several agents at once, for naming sessions: live state, then one history read for the rest,
   * which puts back what it finds. An id the history does not hold either (a session's agent_id that
   * names no agent) is not asked again for MISS_TTL_MS: naming must not cost every session create a
   * ClickHouse query. A create writes the live store, which is always read first, so a new agent is
   * never hidden by that memory.
   */
  async getMany(ids: readonly string[], nowMs = Date.now()): Promise<Agent[]> {
    const live = (await Promise.all(ids.map((id) => this.live.get(id)))).filter((agent) => agent !== null);
    const found = new Set(live.map((agent) => agent.id));
    const unknown = ids.filter((id) => !found.has(id) && (this.misses.get(id) ?? 0) <= nowMs);
    const stored = await this.history.byIds(unknown);
    const storedIds = new Set(stored.map((agent) => agent.id));
    if (this.misses.size > MAX_MISSES) this.misses.clear();
    for (const id of unknown) if (!storedIds.has(id)) this.misses.set(id, nowMs + MISS_TTL_MS);
    const restored = await Promise.all(stored.map((agent) => this.restore(agent)));
    return [...live, ...restored.filter((agent) => agent !== null)];
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
