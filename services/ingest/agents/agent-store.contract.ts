import { describe, expect, it } from 'vitest';
import { applyAgentUpdate, type AgentUpdate } from './agent.ts';
import { makeAgent, T0 } from './agent.fixtures.ts';
import type { AgentMutation, AgentStore } from './agent-store.ts';

const change =
  (update: AgentUpdate, nowMs = T0 + 1_000): AgentMutation =>
  (current) =>
    applyAgentUpdate(current, update, nowMs);

/**
 * The behaviour every AgentStore must have, run against the memory store in unit tests and against
 * RedisAgentStore on the real Redis. Each test asks for a fresh, empty store.
 */
export function agentStoreContract(name: string, makeStore: () => AgentStore | Promise<AgentStore>): void {
  describe(`${name} (AgentStore contract)`, () => {
    it('returns a created agent by id, and null for an unknown one', async () => {
      const store = await makeStore();
      const agent = makeAgent({
        config: { system_prompt: 'Hi', functions: [{ name: 'book', parameters: { type: 'object' } }] },
      });
      await store.create(agent);
      expect(await store.get(agent.id)).toEqual(agent);
      expect(await store.get('unknown')).toBeNull();
    });

    it('knows a tenant’s active agents: a create adds one, a delete takes it out, a reactivation puts it back', async () => {
      const store = await makeStore();
      const a = makeAgent({ user_id: 'cap-a' });
      const b = makeAgent({ user_id: 'cap-a' });
      const other = makeAgent({ user_id: 'cap-b' });
      for (const agent of [a, b, other]) await store.create(agent);
      expect((await store.activeIds('cap-a')).sort()).toEqual([a.id, b.id].sort());
      await store.update(a.id, change({ is_active: false }));
      expect(await store.activeIds('cap-a')).toEqual([b.id]);
      await store.update(a.id, change({ is_active: true }, T0 + 2_000));
      expect((await store.activeIds('cap-a')).sort()).toEqual([a.id, b.id].sort());
      expect(await store.activeIds('cap-b')).toEqual([other.id]);
      expect(await store.activeIds('nobody')).toEqual([]);
    });

    it('indexes an active agent once and never a deleted one', async () => {
      const store = await makeStore();
      const kept = makeAgent({ user_id: 'cap-i' });
      const gone = makeAgent({ user_id: 'cap-i' });
      for (const agent of [kept, gone]) await store.create(agent);
      await store.update(gone.id, change({ is_active: false }));
      await store.indexActive(kept);
      await store.indexActive(gone);
      expect(await store.activeIds('cap-i')).toEqual([kept.id]);
    });

    it('refuses a second agent with the same id and keeps the first', async () => {
      const store = await makeStore();
      const first = makeAgent();
      await store.create(first);
      await expect(store.create({ ...first, name: 'other' })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await store.get(first.id)).toEqual(first);
    });

    it('an update returns before and after and is what get reads next', async () => {
      const store = await makeStore();
      const agent = makeAgent();
      await store.create(agent);
      const outcome = await store.update(agent.id, change({ name: 'Night desk', config: { voice_id: 'v1' } }));
      const after = { ...agent, name: 'Night desk', config: { voice_id: 'v1' }, updated_at: T0 + 1_000, version: 2 };
      expect(outcome).toEqual({ kind: 'changed', before: agent, after });
      expect(await store.get(agent.id)).toEqual(after);
    });

    it('an update that changes nothing writes nothing, and an unknown agent is not_found', async () => {
      const store = await makeStore();
      const agent = makeAgent();
      await store.create(agent);
      expect(await store.update(agent.id, change({ name: agent.name, is_active: true }))).toEqual({
        kind: 'unchanged',
        agent,
      });
      expect(await store.get(agent.id)).toEqual(agent);
      expect(await store.update('unknown', change({ name: 'x' }))).toEqual({ kind: 'not_found' });
    });

    it('loses no update of many concurrent ones, and refuses a revision that moves the owner', async () => {
      const store = await makeStore();
      const agent = makeAgent({ config: {} });
      await store.create(agent);
      const updates = Array.from({ length: 30 }, (_, i) =>
        store.update(agent.id, (current) =>
          applyAgentUpdate(current, { config: { ...current.config, [`k${i}`]: i } }, T0 + i),
        ),
      );
      await Promise.all(updates);
      const stored = await store.get(agent.id);
      expect([Object.keys(stored?.config ?? {}).length, stored?.version]).toEqual([30, 31]);
      await expect(
        store.update(agent.id, (current) => ({ ...current, user_id: 'someone-else', version: current.version + 1 })),
      ).rejects.toMatchObject({ code: 'INTERNAL' });
      expect((await store.get(agent.id))?.user_id).toBe('user-1');
    });
  });
}
