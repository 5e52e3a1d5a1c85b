import { describe, expect, it } from 'vitest';
import { MemoryNumberStore } from './memory-number-store.ts';
import { makeAssignRequest } from './number-store.contract.ts';
import type { AgentNumber } from './number-rules.ts';
import { HistoryBackedNumberStore } from './history-backed-number-store.ts';
import type { NumberHistory } from './number-history.ts';

describe('HistoryBackedNumberStore', () => {
  it('reads the numbers of many agents from live state and asks the history once for the agents it lacks', async () => {
    const live = new MemoryNumberStore();
    await live.assign(makeAssignRequest({ agent_id: 'live', phone_number: '+15551230001' }));
    const stored: AgentNumber = {
      agent_id: 'stored',
      phone_number: '+15551230002',
      provider: 'twilio',
      assigned_at: 1,
    };
    const asked: string[][] = [];
    const history = {
      agent: async () => {
        throw new Error('one query per agent');
      },
      agents: async (ids: readonly string[]) => {
        asked.push([...ids]);
        return ids.includes('stored') ? [stored] : [];
      },
    } as unknown as NumberHistory;
    const store = new HistoryBackedNumberStore(live, history);
    const ids = ['live', 'stored', ...Array.from({ length: 50 }, (_, i) => `none-${i}`)];
    const numbers = await store.getMany(ids);
    expect(numbers.map((number) => number.phone_number).sort()).toEqual(['+15551230001', '+15551230002']);
    expect(asked).toEqual([ids.filter((id) => id !== 'live')]);
  });
});
