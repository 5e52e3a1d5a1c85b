import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.ts';
import { sessionMutation } from './session-commands.ts';
import { makeSession, T0 } from './session.fixtures.ts';
import type { Session } from './session.ts';
import type { SessionStore, SessionStoreOptions } from './session-store.ts';

export type MakeSessionStore = (options?: SessionStoreOptions) => SessionStore | Promise<SessionStore>;

/**
 * The behaviour every SessionStore must have, run against the memory store in unit tests and
 * against RedisSessionStore on the real Redis. Each test asks for a fresh, empty store.
 */
export function sessionStoreContract(name: string, makeStore: MakeSessionStore): void {
  describe(`${name} (SessionStore contract)`, () => {
    it('returns a created session by id and by room, and null for unknown ones', async () => {
      const store = await makeStore();
      const session = makeSession({ session_data: { lang: 'en', nested: { a: [1, 2] } } });
      await store.create(session);
      expect(await store.get(session.id)).toEqual(session);
      expect(await store.getByRoom(session.room_name, session.user_id)).toEqual(session);
      expect(await store.getByRoom(session.room_name, null)).toEqual(session);
      expect(await store.get('unknown')).toBeNull();
      expect(await store.getByRoom('unknown-room', null)).toBeNull();
      expect(await store.getByRoom('unknown-room', session.user_id)).toBeNull();
    });

    it('refuses a second session with the same id and keeps the first', async () => {
      const store = await makeStore();
      const first = makeSession();
      await store.create(first);
      await expect(store.create({ ...first, room_name: 'other' })).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(await store.get(first.id)).toEqual(first);
    });

    it('getByRoom returns the latest session created for the room', async () => {
      const store = await makeStore();
      const older = makeSession({ room_name: 'room-a', created_at: T0 });
      const newer = makeSession({ room_name: 'room-a', created_at: T0 + 1_000 });
      await store.create(older);
      await store.create(newer);
      expect((await store.getByRoom('room-a', older.user_id))?.id).toBe(newer.id);
      expect((await store.getByRoom('room-a', null))?.id).toBe(newer.id);
    });

    it('an older session created later (restored from history) does not take its room over', async () => {
      const store = await makeStore();
      const newer = makeSession({ room_name: 'room-b', created_at: T0 + 1_000 });
      const restored = makeSession({
        room_name: 'room-b',
        created_at: T0,
        status: 'COMPLETED',
        ended_at: T0 + 500,
        duration: 0,
      });
      await store.create(newer);
      await store.create(restored);
      expect((await store.getByRoom('room-b', newer.user_id))?.id).toBe(newer.id);
      expect((await store.getByRoom('room-b', null))?.id).toBe(newer.id);
      expect(await store.get(restored.id)).toEqual(restored);
    });

    it('an update returns before and after and is what get reads next', async () => {
      const store = await makeStore();
      const session = makeSession();
      await store.create(session);
      const outcome = await store.update(session.id, sessionMutation({ status: 'COMPLETED' }, T0 + 61_500));
      const after = {
        ...session,
        status: 'COMPLETED',
        ended_at: T0 + 61_500,
        duration: 61,
        updated_at: T0 + 61_500,
        version: 2,
      };
      expect(outcome).toEqual({ kind: 'changed', before: session, after });
      expect(await store.get(session.id)).toEqual(after);
    });

    it('a mutation that changes nothing writes nothing', async () => {
      const store = await makeStore();
      const session = makeSession();
      await store.create(session);
      expect(await store.update(session.id, sessionMutation({}, T0 + 5_000))).toEqual({ kind: 'unchanged', session });
      expect(await store.get(session.id)).toEqual(session);
    });

    it('an update of an unknown id is not_found and never calls the mutation', async () => {
      const store = await makeStore();
      let called = false;
      const outcome = await store.update('unknown', (s) => ((called = true), s));
      expect(outcome).toEqual({ kind: 'not_found' });
      expect(called).toBe(false);
    });

    it('a conflict leaves the session unchanged', async () => {
      const store = await makeStore();
      const session = makeSession({ status: 'COMPLETED', ended_at: T0 + 1_000, duration: 1 });
      await store.create(session);
      const reopening = store.update(session.id, sessionMutation({ status: 'ACTIVE' }, T0 + 2_000));
      await expect(reopening).rejects.toMatchObject({
        code: 'CONFLICT',
        detail: 'Cannot change session status from COMPLETED to ACTIVE',
      });
      expect(await store.get(session.id)).toEqual(session);
    });

    it('refuses a revision that skips a version or moves the session to another room', async () => {
      const store = await makeStore();
      const session = makeSession();
      await store.create(session);
      await expect(store.update(session.id, (s) => ({ ...s, status: 'FAILED' }))).rejects.toBeInstanceOf(AppError);
      await expect(
        store.update(session.id, (s) => ({ ...s, room_name: 'elsewhere', version: s.version + 1 })),
      ).rejects.toBeInstanceOf(AppError);
      expect(await store.get(session.id)).toEqual(session);
    });

    it('lets a missing agent_id be filled once, and refuses to change one that is set', async () => {
      const store = await makeStore();
      const session = makeSession({ agent_id: null });
      await store.create(session);
      const filled = await store.update(session.id, (s) => ({ ...s, agent_id: 'agent-1', version: s.version + 1 }));
      expect(filled).toMatchObject({ kind: 'changed', after: { agent_id: 'agent-1' } });
      await expect(
        store.update(session.id, (s) => ({ ...s, agent_id: 'agent-2', version: s.version + 1 })),
      ).rejects.toBeInstanceOf(AppError);
      await expect(
        store.update(session.id, (s) => ({ ...s, agent_id: null, version: s.version + 1 })),
      ).rejects.toBeInstanceOf(AppError);
    });

    it('50 concurrent updates that each merge a distinct metadata key all survive', async () => {
      const store = await makeStore();
      const session = makeSession({ session_data: { origin: 'test' } });
      await store.create(session);
      const keys = Array.from({ length: 50 }, (_, i) => `key_${i}`);
      const outcomes = await Promise.all(
        keys.map((key, i) => store.update(session.id, sessionMutation({ metadata: { [key]: i } }, T0 + i))),
      );
      expect(outcomes.every((o) => o.kind === 'changed')).toBe(true);
      const stored = await store.get(session.id);
      expect(stored?.session_data).toEqual({ origin: 'test', ...Object.fromEntries(keys.map((key, i) => [key, i])) });
      expect(stored?.version).toBe(51);
    });

    it('runs the work of one room one at a time, and other rooms alongside', async () => {
      const store = await makeStore();
      let running = 0;
      let most = 0;
      const work = async () => {
        most = Math.max(most, ++running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        running -= 1;
      };
      await Promise.all(Array.from({ length: 5 }, () => store.withRoomLock('u', 'room-lock', work)));
      expect(most).toBe(1);
      let other = false;
      await store.withRoomLock('u', 'room-a', () => store.withRoomLock('u', 'room-b', async () => void (other = true)));
      expect(other).toBe(true);
      let otherTenant = false;
      await store.withRoomLock('u', 'room-a', () =>
        store.withRoomLock('v', 'room-a', async () => void (otherTenant = true)),
      );
      expect(otherTenant).toBe(true);
    });

    it('keeps a room per tenant: two tenants’ sessions of one room name live at once, each its own', async () => {
      const store = await makeStore();
      const mine = makeSession({ user_id: 'alice', room_name: 'shared', created_at: T0 });
      const theirs = makeSession({ user_id: 'bob', room_name: 'shared', created_at: T0 + 1_000 });
      await store.create(mine);
      await store.create(theirs);
      expect(await store.getByRoom('shared', 'alice')).toEqual(mine);
      expect(await store.getByRoom('shared', 'bob')).toEqual(theirs);
      expect(await store.getByRoom('shared', 'carol')).toBeNull();
      await store.update(mine.id, sessionMutation({ status: 'COMPLETED' }, T0 + 2_000));
      expect((await store.getByRoom('shared', 'alice'))?.status).toBe('COMPLETED');
      expect(await store.getByRoom('shared', 'bob')).toEqual(theirs);
    });

    it('names no tenant’s session for a room live in several tenants: a conflict, until one is left live', async () => {
      const store = await makeStore();
      const mine = makeSession({ user_id: 'alice', room_name: 'both', created_at: T0 });
      const theirs = makeSession({ user_id: 'bob', room_name: 'both', created_at: T0 + 1_000 });
      await store.create(mine);
      expect((await store.getByRoom('both', null))?.id).toBe(mine.id);
      await store.create(theirs);
      const conflict = await store.getByRoom('both', null).catch((error: unknown) => error);
      expect(conflict).toMatchObject({ code: 'CONFLICT' });
      expect((conflict as AppError).detail).not.toMatch(/alice|bob/);
      expect((await store.getByRoom('both', 'alice'))?.id).toBe(mine.id);
      // The latest session of any tenant, as before, once one tenant's call has ended.
      await store.update(theirs.id, sessionMutation({ status: 'COMPLETED' }, T0 + 2_000));
      expect((await store.getByRoom('both', null))?.id).toBe(theirs.id);
      const again = makeSession({ user_id: 'bob', room_name: 'both', created_at: T0 + 3_000, status: 'CREATED' });
      await store.create(again);
      await expect(store.getByRoom('both', null)).rejects.toMatchObject({ code: 'CONFLICT' });
      await store.update(mine.id, sessionMutation({ status: 'FAILED' }, T0 + 4_000));
      expect((await store.getByRoom('both', null))?.id).toBe(again.id);
    });

    it('tells tenants apart whatever their ids and room names hold', async () => {
      const store = await makeStore();
      const a = makeSession({ user_id: 'a:b', room_name: 'c' });
      const b = makeSession({ user_id: 'a', room_name: 'b:c' });
      await store.create(a);
      await store.create(b);
      expect((await store.getByRoom('c', 'a:b'))?.id).toBe(a.id);
      expect((await store.getByRoom('b:c', 'a'))?.id).toBe(b.id);
      expect(await store.getByRoom('b:c', 'a:b')).toBeNull();
    });

    listContract(makeStore);
    retentionContract(makeStore);
    idleContract(makeStore);
  });
}

function listContract(makeStore: MakeSessionStore): void {
  it('lists a user’s sessions newest first, a page at a time, with the total on every page', async () => {
    const store = await makeStore();
    const mine = Array.from({ length: 5 }, (_, i) => makeSession({ user_id: 'alice', created_at: T0 + i * 1_000 }));
    for (const session of [...mine, makeSession({ user_id: 'bob', created_at: T0 + 10_000 })])
      await store.create(session);
    const ids = (sessions: readonly Session[]) => sessions.map((s) => s.id);
    const newest = ids([...mine].reverse());
    expect(await store.list('alice', { page: 1, limit: 2 })).toEqual({ sessions: [mine[4], mine[3]], total: 5 });
    expect(ids((await store.list('alice', { page: 2, limit: 2 })).sessions)).toEqual(newest.slice(2, 4));
    expect(await store.list('alice', { page: 3, limit: 2 })).toMatchObject({ total: 5, sessions: [mine[0]] });
    expect(await store.list('alice', { page: 4, limit: 2 })).toEqual({ sessions: [], total: 5 });
    expect(await store.list('nobody', { page: 1, limit: 10 })).toEqual({ sessions: [], total: 0 });
  });

  it('bounds the list by created_at, both ends included', async () => {
    const store = await makeStore();
    const sessions = Array.from({ length: 5 }, (_, i) => makeSession({ user_id: 'carol', created_at: T0 + i * 1_000 }));
    for (const session of sessions) await store.create(session);
    const page = await store.list('carol', { page: 1, limit: 10, start_ms: T0 + 1_000, end_ms: T0 + 3_000 });
    expect(page).toEqual({ sessions: [sessions[3], sessions[2], sessions[1]], total: 3 });
  });

  it('lists only the sessions of a direction, with their own total, paged', async () => {
    const store = await makeStore();
    const directions = ['INBOUND', 'OUTBOUND', null, 'OUTBOUND', 'OUTBOUND'] as const;
    const sessions = directions.map((call_direction, i) =>
      makeSession({ user_id: 'erin', call_direction, created_at: T0 + i * 1_000 }),
    );
    for (const session of sessions) await store.create(session);
    expect(await store.list('erin', { page: 1, limit: 2, direction: 'OUTBOUND' })).toEqual({
      sessions: [sessions[4], sessions[3]],
      total: 3,
    });
    expect(await store.list('erin', { page: 2, limit: 2, direction: 'OUTBOUND' })).toEqual({
      sessions: [sessions[1]],
      total: 3,
    });
    expect(await store.list('erin', { page: 1, limit: 10, direction: 'INBOUND' })).toEqual({
      sessions: [sessions[0]],
      total: 1,
    });
  });

  it('shows updates in the list', async () => {
    const store = await makeStore();
    const session = makeSession({ user_id: 'dave' });
    await store.create(session);
    await store.update(session.id, sessionMutation({ agent_name: 'Ava' }, T0 + 1));
    expect((await store.list('dave', { page: 1, limit: 1 })).sessions[0]?.agent_name).toBe('Ava');
  });
}

function retentionContract(makeStore: MakeSessionStore): void {
  it('forgets an ended session once the retention has passed, and keeps live ones', async () => {
    const store = await makeStore({ endedRetentionMs: 1_000 });
    const ended = makeSession({ user_id: 'erin', room_name: 'room-ended' });
    const live = makeSession({ user_id: 'erin', created_at: T0 + 1 });
    await store.create(ended);
    await store.create(live);
    await store.update(ended.id, sessionMutation({ status: 'FAILED' }, T0 + 1_000));
    expect((await store.get(ended.id))?.status).toBe('FAILED');
    await waitUntil(async () => (await store.get(ended.id)) === null, 5_000);
    expect(await store.getByRoom('room-ended', 'erin')).toBeNull();
    expect(await store.getByRoom('room-ended', null)).toBeNull();
    expect(await store.list('erin', { page: 1, limit: 10 })).toEqual({ sessions: [live], total: 1 });
    expect(await store.get(live.id)).toEqual(live);
  });
}

function idleContract(makeStore: MakeSessionStore): void {
  it('forgets a session never ended once it was not changed for the idle retention, room pointer and list entry too', async () => {
    const store = await makeStore({ idleRetentionMs: 1_000 });
    const idle = makeSession({ user_id: 'fred', room_name: 'room-idle' });
    await store.create(idle);
    expect(await store.getByRoom('room-idle', 'fred')).toEqual(idle);
    await waitUntil(async () => (await store.get(idle.id)) === null, 5_000);
    expect(await store.getByRoom('room-idle', 'fred')).toBeNull();
    expect(await store.getByRoom('room-idle', null)).toBeNull();
    expect(await store.list('fred', { page: 1, limit: 10 })).toEqual({ sessions: [], total: 0 });
  });

  it('counts the idle retention from the last change of a session', async () => {
    const store = await makeStore({ idleRetentionMs: 1_500 });
    const session = makeSession({ user_id: 'gina' });
    await store.create(session);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    await store.update(session.id, sessionMutation({ agent_name: 'Ava' }, T0 + 1));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect((await store.get(session.id))?.agent_name).toBe('Ava');
    await waitUntil(async () => (await store.get(session.id)) === null, 5_000);
  });
}

async function waitUntil(condition: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
