import { describe, expect, it } from 'vitest';
import { MemorySessionStore } from './memory-session-store.ts';
import { endSession, getSession, getSessionByRoom, newBoundedSession, updateSession } from './session-commands.ts';
import type { SessionStore } from './session-store.ts';
import { T0 } from './session.fixtures.ts';

const input = { id: 's-1', room_name: 'room-1', user_id: 'u-1' };

async function createSession(store: SessionStore, nowMs: number) {
  const session = newBoundedSession(input, nowMs);
  await store.create(session);
  return session;
}

/** What the session service does for POST /end: the room's latest session, then its end. */
async function endRoomSession(store: SessionStore, roomName: string, nowMs: number) {
  return endSession(store, (await getSessionByRoom(store, roomName, 'u-1')).id, nowMs);
}

describe('session commands', () => {
  it('creates a session the store then returns', async () => {
    const store = new MemorySessionStore();
    const session = await createSession(store, T0);
    expect(await getSession(store, 's-1')).toEqual(session);
    expect(await getSessionByRoom(store, 'room-1', 'u-1')).toEqual(session);
    expect(await getSessionByRoom(store, 'room-1', null)).toEqual(session);
  });

  it('answers an unknown session with NOT_FOUND "Session not found"', async () => {
    const store = new MemorySessionStore();
    const notFound = { code: 'NOT_FOUND', detail: 'Session not found' };
    await expect(getSession(store, 'nope')).rejects.toMatchObject(notFound);
    await expect(getSessionByRoom(store, 'nope', 'u-1')).rejects.toMatchObject(notFound);
    await expect(updateSession(store, 'nope', { status: 'FAILED' }, T0)).rejects.toMatchObject(notFound);
    await expect(endRoomSession(store, 'nope', T0)).rejects.toMatchObject(notFound);
  });

  it('reports the previous revision of a change, and none for no change', async () => {
    const store = new MemorySessionStore();
    const created = await createSession(store, T0);
    const change = await updateSession(store, 's-1', { metadata: { k: 1 } }, T0 + 1);
    expect(change).toMatchObject({ before: created, session: { session_data: { k: 1 }, version: 2 } });
    expect(await updateSession(store, 's-1', { metadata: { k: 1 } }, T0 + 2)).toEqual({
      before: null,
      session: change.session,
    });
  });

  it('turns a forbidden move into CONFLICT', async () => {
    const store = new MemorySessionStore();
    await createSession(store, T0);
    await updateSession(store, 's-1', { status: 'COMPLETED' }, T0 + 1);
    await expect(updateSession(store, 's-1', { status: 'ACTIVE' }, T0 + 2)).rejects.toMatchObject({
      code: 'CONFLICT',
      detail: 'Cannot change session status from COMPLETED to ACTIVE',
    });
  });

  it('ends the room’s ACTIVE session once, and returns it unchanged after', async () => {
    const store = new MemorySessionStore();
    await createSession(store, T0);
    const ended = await endRoomSession(store, 'room-1', T0 + 12_345);
    expect(ended.session).toMatchObject({ status: 'COMPLETED', ended_at: T0 + 12_345, duration: 12 });
    expect(await endRoomSession(store, 'room-1', T0 + 20_000)).toEqual({ before: null, session: ended.session });
  });
});
