import { describe, expect, it } from 'vitest';
import { makeSession, T0 } from './session.fixtures.ts';
import { fillFromJoin, roomJoin } from './session-join.ts';

describe('roomJoin', () => {
  it('joins a CREATED or ACTIVE session of the same user, never another tenant’s, and starts anew after an end', () => {
    expect(roomJoin(null, { user_id: 'u' })).toEqual({ kind: 'new' });
    expect(roomJoin(makeSession({ status: 'CREATED', user_id: 'u' }), { user_id: 'u' })).toEqual({ kind: 'join' });
    expect(roomJoin(makeSession({ status: 'ACTIVE', user_id: 'u' }), { user_id: 'u' })).toEqual({ kind: 'join' });
    expect(roomJoin(makeSession({ status: 'ACTIVE', user_id: 'u' }), { user_id: 'other' })).toEqual({ kind: 'new' });
    expect(roomJoin(makeSession({ status: 'COMPLETED', user_id: 'u' }), { user_id: 'other' })).toEqual({ kind: 'new' });
    expect(roomJoin(makeSession({ status: 'FAILED', user_id: 'u' }), { user_id: 'u' })).toEqual({ kind: 'new' });
  });
});

describe('fillFromJoin', () => {
  it('fills a missing agent_id and the session_data keys the session lacks, keeping the keys it holds', () => {
    const current = makeSession({ agent_id: null, session_data: { lang: 'en', source: 'token-route' } });
    const filled = fillFromJoin(
      current,
      { user_id: 'user-1', agent_id: 'agent-9', session_data: { lang: 'de', worker: 'w-1' } },
      T0 + 5,
    );
    expect(filled).toEqual({
      ...current,
      agent_id: 'agent-9',
      session_data: { lang: 'en', source: 'token-route', worker: 'w-1' },
      updated_at: T0 + 5,
      version: 2,
    });
  });

  it('never replaces an agent_id the session has', () => {
    const current = makeSession({ agent_id: 'agent-1' });
    expect(fillFromJoin(current, { user_id: 'user-1', agent_id: 'agent-2' }, T0 + 5)).toBeNull();
  });

  it('changes nothing when nothing is missing, and nothing of an ended session', () => {
    const current = makeSession({ agent_id: 'a', session_data: { k: 1 } });
    expect(fillFromJoin(current, { user_id: 'user-1', agent_id: null, session_data: { k: 2 } }, T0 + 5)).toBeNull();
    expect(fillFromJoin(makeSession({ status: 'COMPLETED' }), { user_id: 'user-1', agent_id: 'a' }, T0 + 5)).toBeNull();
  });
});
