import { describe, expect, it } from 'vitest';
import type { AssignRequest } from './number-rules.ts';
import type { NumberStore, NumberStoreOptions } from './number-store.ts';

export type MakeNumberStore = (options?: NumberStoreOptions) => NumberStore | Promise<NumberStore>;

const T0 = Date.UTC(2026, 10, 22, 1, 29, 17, 578);

/** An assignment of +15551230001 to agent-1 at T0; override any field. Test support only. */
export function makeAssignRequest(overrides: Partial<AssignRequest> = {}): AssignRequest {
  return { agent_id: 'agent-1', phone_number: '+15551230001', provider: 'twilio', assigned_at: T0, ...overrides };
}

/** The behaviour every NumberStore must have; each test asks for a fresh, empty store. */
export function numberStoreContract(name: string, makeStore: MakeNumberStore): void {
  describe(`${name} (NumberStore contract)`, () => {
    it('assigns a free number and shows it on the agent', async () => {
      const store = await makeStore();
      const request = makeAssignRequest();
      expect(await store.assign(request)).toEqual({ kind: 'assigned', assignment: request, previous: null });
      expect(await store.get('agent-1')).toEqual(request);
    });

    it('names the holder of a number while it is assigned, and nobody after its release', async () => {
      const store = await makeStore();
      expect(await store.holder('+15551230001')).toBeNull();
      await store.assign(makeAssignRequest());
      expect(await store.holder('+15551230001')).toBe('agent-1');
      expect(await store.holder('+15551230002')).toBeNull();
      await store.release('agent-1');
      expect(await store.holder('+15551230001')).toBeNull();
    });

    it('keeps a number unique within its scope only: two tenants’ agents hold it at once, each found in its own', async () => {
      const store = await makeStore();
      const a = makeAssignRequest({ agent_id: 'agent-a', scope: 'tenant-a' });
      const b = makeAssignRequest({ agent_id: 'agent-b', scope: 'tenant-b' });
      expect((await store.assign(a)).kind).toBe('assigned');
      expect((await store.assign(b)).kind).toBe('assigned');
      expect(await store.get('agent-b')).toEqual(b);
      expect((await store.assign(makeAssignRequest({ agent_id: 'agent-a2', scope: 'tenant-a' }))).kind).toBe(
        'number_taken',
      );
      expect(await store.holder(a.phone_number, 'tenant-a')).toBe('agent-a');
      expect(await store.holder(a.phone_number, 'tenant-b')).toBe('agent-b');
      expect(await store.holder(a.phone_number)).toBeNull();
      expect((await store.holders(a.phone_number)).sort()).toEqual(['agent-a', 'agent-b']);
      // The unscoped holder of the same number is a third, apart from both.
      expect((await store.assign(makeAssignRequest({ agent_id: 'agent-u' }))).kind).toBe('assigned');
      expect(await store.holder(a.phone_number)).toBe('agent-u');
      expect(await store.release('agent-a')).toMatchObject({ kind: 'released', released: a });
      expect(await store.holder(a.phone_number, 'tenant-a')).toBeNull();
      expect(await store.holder(a.phone_number, 'tenant-b')).toBe('agent-b');
      expect((await store.holders(a.phone_number)).sort()).toEqual(['agent-b', 'agent-u']);
      expect(await store.forget(b)).toBe(true);
      expect(await store.holders(a.phone_number)).toEqual(['agent-u']);
    });

    it('tells scopes apart whatever the tenant ids hold', async () => {
      const store = await makeStore();
      await store.assign(makeAssignRequest({ agent_id: 'x', scope: 'a:+1555' }));
      expect(await store.holder('+15551230001', 'a')).toBeNull();
      expect(await store.holder('+15551230001', 'a:+1555')).toBe('x');
    });

    it('names the agent as it was before an assignment: null if it never held a number, else known with none', async () => {
      const store = await makeStore();
      await store.assign(makeAssignRequest());
      await store.release('agent-1');
      const again = makeAssignRequest({ phone_number: '+15551230002' });
      expect(await store.assign(again)).toEqual({
        kind: 'assigned',
        assignment: again,
        previous: { agent_id: 'agent-1', phone_number: null, provider: null, assigned_at: null },
      });
    });

    it('forgets an agent that still holds the number: it is unknown again and the number free', async () => {
      const store = await makeStore();
      const request = makeAssignRequest();
      await store.assign(request);
      expect(await store.forget(request)).toBe(true);
      expect(await store.get('agent-1')).toBeNull();
      expect(await store.release('agent-1')).toEqual({ kind: 'agent_unknown', detail: 'Agent not found' });
      expect(await store.assign(makeAssignRequest({ agent_id: 'agent-2' }))).toMatchObject({
        kind: 'assigned',
        previous: null,
      });
    });

    it('forgets nothing when the agent no longer holds that number', async () => {
      const store = await makeStore();
      const first = makeAssignRequest();
      await store.assign(first);
      await store.release('agent-1');
      const second = makeAssignRequest({ phone_number: '+15551230002' });
      await store.assign(second);
      expect(await store.forget(first)).toBe(false);
      expect(await store.get('agent-1')).toEqual(second);
      expect(await store.forget(makeAssignRequest({ agent_id: 'never-seen' }))).toBe(false);
      expect(await store.get('never-seen')).toBeNull();
    });

    it('refuses a second number for an agent that holds one', async () => {
      const store = await makeStore();
      await store.assign(makeAssignRequest());
      expect(await store.assign(makeAssignRequest({ phone_number: '+15551230002' }))).toEqual({
        kind: 'agent_has_number',
        phone_number: '+15551230001',
        detail: 'Agent already has number +15551230001. Release it first.',
      });
      expect(await store.assign(makeAssignRequest())).toMatchObject({ kind: 'agent_has_number' });
    });

    it('refuses a number held by another agent', async () => {
      const store = await makeStore();
      await store.assign(makeAssignRequest());
      expect(await store.assign(makeAssignRequest({ agent_id: 'agent-2' }))).toEqual({
        kind: 'number_taken',
        detail: 'Phone number +15551230001 is assigned to another agent',
      });
      expect(await store.get('agent-2')).toBeNull();
    });

    it('forgets an agent that released its number once the released retention has passed, and keeps one holding a number', async () => {
      const store = await makeStore({ releasedRetentionMs: 1_000 });
      await store.assign(makeAssignRequest());
      const holder = makeAssignRequest({ agent_id: 'agent-2', phone_number: '+15551230002' });
      await store.assign(holder);
      await store.release('agent-1');
      expect(await store.get('agent-1')).toEqual({
        agent_id: 'agent-1',
        phone_number: null,
        provider: null,
        assigned_at: null,
      });
      const deadline = Date.now() + 5_000;
      while ((await store.get('agent-1')) !== null) {
        if (Date.now() > deadline) throw new Error('agent-1 still known 5 s after its release');
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
      expect(await store.release('agent-1')).toEqual({ kind: 'agent_unknown', detail: 'Agent not found' });
      expect(await store.get('agent-2')).toEqual(holder);
    });

    it('releases the number once, then finds no number; an unknown agent is not found', async () => {
      const store = await makeStore();
      const request = makeAssignRequest();
      await store.assign(request);
      expect(await store.release('agent-1')).toEqual({ kind: 'released', released: request });
      expect(await store.release('agent-1')).toEqual({
        kind: 'no_number',
        detail: 'Agent has no assigned phone number',
      });
      expect(await store.get('agent-1')).toEqual({
        agent_id: 'agent-1',
        phone_number: null,
        provider: null,
        assigned_at: null,
      });
      expect(await store.release('never-seen')).toEqual({ kind: 'agent_unknown', detail: 'Agent not found' });
      expect(await store.get('never-seen')).toBeNull();
    });

    it('a released number can go to another agent, and the first agent can take a new one', async () => {
      const store = await makeStore();
      await store.assign(makeAssignRequest());
      await store.release('agent-1');
      expect(await store.assign(makeAssignRequest({ agent_id: 'agent-2' }))).toMatchObject({ kind: 'assigned' });
      expect(await store.assign(makeAssignRequest({ phone_number: '+15551230003' }))).toMatchObject({
        kind: 'assigned',
      });
      expect((await store.get('agent-1'))?.phone_number).toBe('+15551230003');
    });

    it('of 20 agents racing for one number exactly one gets it', async () => {
      const store = await makeStore();
      const agents = Array.from({ length: 20 }, (_, i) => `racer-${i}`);
      const outcomes = await Promise.all(agents.map((agent_id) => store.assign(makeAssignRequest({ agent_id }))));
      const winners = agents.filter((_, i) => outcomes[i]?.kind === 'assigned');
      expect(winners).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === 'number_taken')).toHaveLength(19);
      const holders = await Promise.all(agents.map((agent) => store.get(agent)));
      expect(holders.filter((h) => h !== null).map((h) => h.agent_id)).toEqual(winners);
    });

    it('an agent racing for 20 numbers gets exactly one, and the others stay free', async () => {
      const store = await makeStore();
      const numbers = Array.from({ length: 20 }, (_, i) => `+1555123${String(i).padStart(4, '0')}`);
      const outcomes = await Promise.all(
        numbers.map((phone_number) => store.assign(makeAssignRequest({ phone_number }))),
      );
      expect(outcomes.filter((o) => o.kind === 'assigned')).toHaveLength(1);
      const held = (await store.get('agent-1'))?.phone_number;
      const free = numbers.filter((n) => n !== held);
      const others = await Promise.all(
        free.map((phone_number, i) => store.assign(makeAssignRequest({ agent_id: `other-${i}`, phone_number }))),
      );
      expect(others.every((o) => o.kind === 'assigned')).toBe(true);
    });

    it('concurrent releases of one number release it once', async () => {
      const store = await makeStore();
      await store.assign(makeAssignRequest());
      const outcomes = await Promise.all(Array.from({ length: 10 }, () => store.release('agent-1')));
      expect(outcomes.filter((o) => o.kind === 'released')).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === 'no_number')).toHaveLength(9);
    });
  });
}
