import type { Agent } from './agent.ts';
import type { AgentMutation, AgentStore, AgentUpdateOutcome } from './agent-store.ts';
import type { AgentHistory } from './agent-history.ts';
import { HistoryBacked } from '../shared/history-backed.ts';

const MISS_TTL_MS = 60_000;
const MAX_MISSES = 10_000;

/** Agents live first, history second (`HistoryBacked`); listing reads the history. */
export class HistoryBackedAgentStore
  extends HistoryBacked<Agent, AgentMutation, AgentUpdateOutcome>
  implements AgentStore
{
  private readonly misses = new Map<string, number>();

  constructor(
    private readonly liveAgents: AgentStore,
    private readonly history: AgentHistory,
  ) {
    super(liveAgents, history);
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

  indexActive(agent: Agent): Promise<void> {
    return this.liveAgents.indexActive(agent);
  }

  active(userId: string): Promise<Agent[]> {
    return this.history.active(userId);
  }

  /**
   * The tenant's active agents, for its cap: those live state holds active (a create is there at
   * once, before the history has it), and those the history holds active that live state does not
   * know at all (after an embedded restart, a flushed Redis, or an upgrade from a release without
   * the live index). An agent live state holds active outside its index (written before the index
   * existed) is counted and put into the index. An agent live state knows as deleted is not counted,
   * whatever the history says yet.
   */
  async activeIds(userId: string): Promise<string[]> {
    const [live, stored] = await Promise.all([this.liveAgents.activeIds(userId), this.history.active(userId)]);
    const known = new Set(live);
    const storedOnly = stored.filter((agent) => !known.has(agent.id));
    const unindexed = await Promise.all(
      storedOnly.map(async (agent) => {
        const copy = await this.liveAgents.get(agent.id);
        if (copy === null) return agent.id;
        if (!copy.is_active) return null;
        await this.liveAgents.indexActive(copy);
        return agent.id;
      }),
    );
    return [...live, ...unindexed.filter((id) => id !== null)];
  }
}
