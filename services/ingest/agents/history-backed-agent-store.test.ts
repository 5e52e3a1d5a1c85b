import { describe, expect, it } from 'vitest';
import type { Agent } from './agent.ts';
import { makeAgent, T0 } from './agent.fixtures.ts';
import { MemoryAgentStore } from './memory-agent-store.ts';
import type { AgentHistory } from './agent-history.ts';
import { HistoryBackedAgentStore } from './history-backed-agent-store.ts';

/** The history as a list of stored agents, counting the ids it is asked for. */
function storedHistory(stored: Agent[]) {
  const asked: string[][] = [];
  const history = {
    byId: async (id: string) => stored.find((agent) => agent.id === id) ?? null,
    byIds: async (ids: readonly string[]) => {
      asked.push([...ids]);
      return stored.filter((agent) => ids.includes(agent.id));
    },
    active: async () => stored,
  } as unknown as AgentHistory;
  return { history, asked };
}

describe('HistoryBackedAgentStore', () => {
  it('counts a tenant’s active agents from live state and from the history it lacks, never one live state holds deleted', async () => {
    const created = makeAgent({ user_id: 'capped' });
    const storedOnly = makeAgent({ user_id: 'capped' });
    const deletedLive = makeAgent({ user_id: 'capped' });
    const live = new MemoryAgentStore();
    await live.create(created);
    await live.create({ ...deletedLive, is_active: false, version: 2 });
    // The history trails: it has not seen the new agent, nor the delete.
    const store = new HistoryBackedAgentStore(live, storedHistory([storedOnly, deletedLive]).history);
    expect((await store.activeIds('capped')).sort()).toEqual([created.id, storedOnly.id].sort());
  });

  it('counts an agent live state holds active outside its index (written before it existed), and indexes it', async () => {
    const upgraded = makeAgent({ user_id: 'capped' });
    const created = makeAgent({ user_id: 'capped' });
    const indexed = new Set<string>();
    // Live state as a release before the index left it: the agent is stored, its tenant's index lacks it.
    class Unindexed extends MemoryAgentStore {
      override async activeIds(userId: string): Promise<string[]> {
        return (await super.activeIds(userId)).filter((id) => id !== upgraded.id || indexed.has(id));
      }
      override async indexActive(agent: Agent): Promise<void> {
        indexed.add(agent.id);
      }
    }
    const live = new Unindexed();
    await live.create(upgraded);
    await live.create(created);
    const store = new HistoryBackedAgentStore(live, storedHistory([upgraded]).history);
    expect(await live.activeIds('capped')).toEqual([created.id]);
    expect((await store.activeIds('capped')).sort()).toEqual([created.id, upgraded.id].sort());
    expect((await live.activeIds('capped')).sort()).toEqual([created.id, upgraded.id].sort());
  });

  it('restores an agent the live store lost, on read and on update', async () => {
    const kept = makeAgent();
    const live = new MemoryAgentStore();
    const store = new HistoryBackedAgentStore(live, storedHistory([kept]).history);
    expect(await store.get(kept.id)).toEqual(kept);
    expect(await live.get(kept.id)).toEqual(kept);
    const other = makeAgent();
    const restoring = new HistoryBackedAgentStore(new MemoryAgentStore(), storedHistory([other]).history);
    expect(
      await restoring.update(other.id, (current) => ({ ...current, name: 'x', version: current.version + 1 })),
    ).toMatchObject({ kind: 'changed', after: { name: 'x', version: 2 } });
  });

  it('names from live state first, restores what the history holds, and asks again for an unknown id only after a minute', async () => {
    const inLive = makeAgent({ name: 'live' });
    const inHistory = makeAgent({ name: 'stored' });
    const live = new MemoryAgentStore();
    await live.create(inLive);
    const { history, asked } = storedHistory([inHistory]);
    const store = new HistoryBackedAgentStore(live, history);
    const names = async (at: number) =>
      (await store.getMany([inLive.id, inHistory.id, 'no-agent'], at)).map((agent) => agent.name).sort();

    expect(await names(T0)).toEqual(['live', 'stored']);
    expect(await live.get(inHistory.id)).toEqual(inHistory);
    expect(await names(T0 + 59_000)).toEqual(['live', 'stored']);
    expect(await names(T0 + 60_001)).toEqual(['live', 'stored']);
    expect(asked).toEqual([[inHistory.id, 'no-agent'], [], ['no-agent']]);
  });
});
