import { describe, expect, it, vi } from 'vitest';
import { MemorySessionStore } from '../sessions/memory-session-store.ts';
import { makeSession } from '../sessions/session.fixtures.ts';
import { AGENTLESS_REFRESH_MS, forgettingChanges, SessionIdentities } from './session-identities.ts';

const UNKNOWN = '00000000-0000-4000-8000-000000000999';

describe('SessionIdentities', () => {
  it('reads a session once, concurrent reads included, and keeps only its id, user, agent, status, end and last change', async () => {
    const store = new MemorySessionStore();
    const session = makeSession({ agent_id: 'agent-7' });
    await store.create(session);
    const reads = vi.spyOn(store, 'get');
    const identities = new SessionIdentities(store);
    const identity = {
      id: session.id,
      user_id: session.user_id,
      agent_id: 'agent-7',
      status: session.status,
      ended_at: null,
      updated_at: session.updated_at,
    };
    expect(await Promise.all([identities.read(session.id), identities.read(session.id)])).toEqual([identity, identity]);
    expect(await identities.read(session.id)).toEqual(identity);
    expect(reads).toHaveBeenCalledTimes(1);
  });

  it('does not keep an unknown session, which may be created a moment later', async () => {
    const store = new MemorySessionStore();
    const identities = new SessionIdentities(store);
    expect(await identities.read(UNKNOWN)).toBeNull();
    await store.create(makeSession({ id: UNKNOWN }));
    expect((await identities.read(UNKNOWN))?.id).toBe(UNKNOWN);
  });

  it('reads a session without an agent once within AGENTLESS_REFRESH_MS, and again after it, when a second create may have filled it in', async () => {
    const store = new MemorySessionStore();
    const session = makeSession({ agent_id: null });
    await store.create(session);
    const reads = vi.spyOn(store, 'get');
    let now = 0;
    const identities = new SessionIdentities(store, { refreshMs: 60_000, now: () => now });
    expect((await identities.read(session.id))?.agent_id).toBeNull();
    // Filled in through another process's store: nothing tells this one.
    await store.update(session.id, (s) => ({ ...s, agent_id: 'agent-late', version: s.version + 1 }));
    now += AGENTLESS_REFRESH_MS - 1;
    expect((await identities.read(session.id))?.agent_id).toBeNull();
    expect(reads).toHaveBeenCalledTimes(1);
    now += 1;
    expect((await identities.read(session.id))?.agent_id).toBe('agent-late');
    expect(reads).toHaveBeenCalledTimes(2);
    // With its agent, it is kept for refreshMs.
    now += 59_999;
    await identities.read(session.id);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('keeps a session without an agent no longer than refreshMs, when that is shorter', async () => {
    const store = new MemorySessionStore();
    const session = makeSession({ agent_id: null });
    await store.create(session);
    const reads = vi.spyOn(store, 'get');
    let now = 0;
    const identities = new SessionIdentities(store, { refreshMs: 200, now: () => now });
    await identities.read(session.id);
    now += 200;
    await identities.read(session.id);
    expect(reads).toHaveBeenCalledTimes(2);
  });

  it('reads a session without an agent again at once after a second create through the store that tells it', async () => {
    const store = new MemorySessionStore();
    const session = makeSession({ agent_id: null });
    await store.create(session);
    const identities = new SessionIdentities(store, { now: () => 0 });
    expect((await identities.read(session.id))?.agent_id).toBeNull();
    await forgettingChanges(store, identities).update(session.id, (s) => ({
      ...s,
      agent_id: 'agent-late',
      version: s.version + 1,
    }));
    expect((await identities.read(session.id))?.agent_id).toBe('agent-late');
  });

  it('does not keep a failed read', async () => {
    const session = makeSession();
    const get = vi.fn().mockRejectedValueOnce(new Error('redis down')).mockResolvedValue(session);
    const identities = new SessionIdentities({ get });
    await expect(identities.read(session.id)).rejects.toThrow('redis down');
    expect((await identities.read(session.id))?.id).toBe(session.id);
    expect(get).toHaveBeenCalledTimes(2);
  });

  it('keeps at most maxEntries, the oldest out first', async () => {
    const sessions = [1, 2, 3].map((n) =>
      makeSession({ id: `00000000-0000-4000-8000-00000000000${n}`, agent_id: `agent-${n}` }),
    );
    const get = vi.fn(async (id: string) => sessions.find((s) => s.id === id) ?? null);
    const identities = new SessionIdentities({ get }, { maxEntries: 2 });
    for (const s of sessions) await identities.read(s.id);
    await identities.read(sessions[2]!.id);
    await identities.read(sessions[1]!.id);
    expect(get).toHaveBeenCalledTimes(3);
    await identities.read(sessions[0]!.id);
    expect(get).toHaveBeenCalledTimes(4);
  });

  it('reads a kept session again once it is refreshMs old, so that its end is seen', async () => {
    const store = new MemorySessionStore();
    // With an agent: a session without one is kept for AGENTLESS_REFRESH_MS only.
    const session = makeSession({ agent_id: 'agent-1' });
    await store.create(session);
    let now = Date.now();
    const endedAt = now;
    const identities = new SessionIdentities(store, { refreshMs: 60_000, now: () => now });
    expect((await identities.read(session.id))?.status).toBe('ACTIVE');
    await store.update(session.id, (current) => ({
      ...current,
      status: 'COMPLETED',
      ended_at: endedAt,
      duration: 0,
      version: current.version + 1,
    }));
    now += 59_999;
    expect((await identities.read(session.id))?.status).toBe('ACTIVE');
    now += 1;
    expect(await identities.read(session.id)).toMatchObject({ status: 'COMPLETED', ended_at: endedAt });
  });

  it('reads a session again at once after a change through the store that tells it, well within refreshMs', async () => {
    const store = new MemorySessionStore();
    const session = makeSession({ agent_id: 'agent-1' });
    await store.create(session);
    const identities = new SessionIdentities(store, { refreshMs: 60_000, now: () => 0 });
    expect((await identities.read(session.id))?.status).toBe('ACTIVE');
    await forgettingChanges(store, identities).update(session.id, (current) => ({
      ...current,
      status: 'FAILED',
      ended_at: 1,
      version: current.version + 1,
    }));
    expect(await identities.read(session.id)).toMatchObject({ status: 'FAILED', ended_at: 1 });
  });

  it('reads afresh when asked, and keeps what it read', async () => {
    const store = new MemorySessionStore();
    const session = makeSession({ agent_id: 'agent-1' });
    await store.create(session);
    const reads = vi.spyOn(store, 'get');
    const identities = new SessionIdentities(store);
    await identities.read(session.id);
    await identities.readAfresh(session.id);
    await identities.read(session.id);
    expect(reads).toHaveBeenCalledTimes(2);
  });
});
