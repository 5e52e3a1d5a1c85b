import { describe, expect, it } from 'vitest';
import { makeSession, T0 } from './session.fixtures.ts';
import {
  applySessionUpdate,
  endSessionByRoom,
  newSession,
  type Session,
  type SessionStatus,
  type SessionUpdate,
} from './session.ts';
import { jsonBytes, MAX_ANALYSIS_BYTES, MAX_SESSION_DATA_BYTES } from './session-limits.ts';
import { MAX_DURATION_SECONDS } from '../../../schemas/records/session.ts';

const changed = (session: Session, update: SessionUpdate, nowMs = T0 + 90_000): Session => {
  const result = applySessionUpdate(session, update, nowMs);
  if (result.kind !== 'changed') throw new Error(`expected a change, got ${JSON.stringify(result)}`);
  return result.session;
};

describe('newSession', () => {
  it('is ACTIVE and started now by default, at version 1 with every extension null', () => {
    const session = newSession({ id: 's-1', room_name: 'room', user_id: 'u' }, T0);
    expect(session).toEqual(makeSession({ id: 's-1', room_name: 'room', user_id: 'u' }));
  });

  it('leaves started_at empty for a CREATED session and keeps agent and session_data', () => {
    const session = newSession(
      { id: 's-1', room_name: 'r', user_id: 'u', agent_id: 'a', session_data: { k: 1 }, status: 'CREATED' },
      T0,
    );
    expect(session).toMatchObject({ status: 'CREATED', started_at: null, agent_id: 'a', session_data: { k: 1 } });
  });
});

describe('applySessionUpdate lifecycle', () => {
  const allowed: [SessionStatus, SessionStatus][] = [
    ['CREATED', 'ACTIVE'],
    ['CREATED', 'COMPLETED'],
    ['CREATED', 'FAILED'],
    ['ACTIVE', 'COMPLETED'],
    ['ACTIVE', 'FAILED'],
  ];
  it.each(allowed)('allows %s -> %s', (from, to) => {
    expect(changed(makeSession({ status: from }), { status: to }).status).toBe(to);
  });

  const forbidden: [SessionStatus, SessionStatus][] = [
    ['ACTIVE', 'CREATED'],
    ['COMPLETED', 'ACTIVE'],
    ['COMPLETED', 'CREATED'],
    ['COMPLETED', 'FAILED'],
    ['FAILED', 'ACTIVE'],
    ['FAILED', 'COMPLETED'],
  ];
  it.each(forbidden)('refuses %s -> %s with a detail naming the move', (from, to) => {
    expect(applySessionUpdate(makeSession({ status: from }), { status: to }, T0)).toEqual({
      kind: 'conflict',
      detail: `Cannot change session status from ${from} to ${to}`,
    });
  });

  it.each(['CREATED', 'ACTIVE', 'COMPLETED', 'FAILED'] as const)(
    'repeating the status %s changes nothing',
    (status) => {
      expect(applySessionUpdate(makeSession({ status }), { status }, T0 + 1)).toEqual({ kind: 'unchanged' });
    },
  );

  it('moving to ACTIVE starts a CREATED session now, and keeps an earlier start', () => {
    expect(changed(makeSession({ status: 'CREATED', started_at: null }), { status: 'ACTIVE' }, T0 + 5).started_at).toBe(
      T0 + 5,
    );
    expect(changed(makeSession({ status: 'CREATED', started_at: T0 }), { status: 'ACTIVE' }, T0 + 5).started_at).toBe(
      T0,
    );
  });

  it('a final status ends the session now with the elapsed whole seconds', () => {
    expect(changed(makeSession(), { status: 'COMPLETED' }, T0 + 61_999)).toMatchObject({
      ended_at: T0 + 61_999,
      duration: 61,
    });
  });

  it('a final status uses the given ended_at and duration', () => {
    expect(changed(makeSession(), { status: 'FAILED', ended_at: T0 + 10_000 })).toMatchObject({
      ended_at: T0 + 10_000,
      duration: 10,
    });
    expect(changed(makeSession(), { status: 'FAILED', ended_at: T0 + 10_000, duration: 42 })).toMatchObject({
      duration: 42,
    });
  });

  it('a moved end of an ended call moves its duration, unless the update gives one', () => {
    const ended = changed(makeSession(), { status: 'COMPLETED', ended_at: T0 + 10_000 });
    expect(changed(ended, { ended_at: T0 + 70_000 })).toMatchObject({ ended_at: T0 + 70_000, duration: 70 });
    expect(changed(ended, { ended_at: T0 + 70_000, duration: 65 })).toMatchObject({ duration: 65 });
  });

  it('a computed duration never passes MAX_DURATION_SECONDS, whatever the instants', () => {
    const session = makeSession({ started_at: Date.parse('1900-01-01T00:00:00Z') });
    expect(changed(session, { status: 'COMPLETED', ended_at: Date.parse('9999-12-31T00:00:00Z') }).duration).toBe(
      MAX_DURATION_SECONDS,
    );
  });

  it('a session that never started ends with duration 0, and an end before the start is not negative', () => {
    expect(changed(makeSession({ status: 'CREATED', started_at: null }), { status: 'FAILED' }).duration).toBe(0);
    expect(changed(makeSession(), { status: 'COMPLETED', ended_at: T0 - 5_000 }).duration).toBe(0);
  });
});

describe('applySessionUpdate fields', () => {
  it('an empty update is unchanged and does not touch updated_at', () => {
    expect(applySessionUpdate(makeSession(), {}, T0 + 1_000)).toEqual({ kind: 'unchanged' });
  });

  it('a real change sets updated_at to now and adds one to version', () => {
    expect(changed(makeSession({ version: 3 }), { agent_name: 'Ava' }, T0 + 7)).toMatchObject({
      updated_at: T0 + 7,
      version: 4,
    });
  });

  it('merges metadata shallowly into session_data', () => {
    const session = makeSession({ session_data: { a: 1, nested: { x: 1 } } });
    expect(changed(session, { metadata: { b: 2, nested: { y: 2 } } }).session_data).toEqual({
      a: 1,
      b: 2,
      nested: { y: 2 },
    });
  });

  it('metadata equal to what is stored is no change, even with nested objects', () => {
    const session = makeSession({ session_data: { a: 1, nested: { x: [1, { y: 2 }] } } });
    expect(applySessionUpdate(session, { metadata: { nested: { x: [1, { y: 2 }] } } }, T0 + 1)).toEqual({
      kind: 'unchanged',
    });
  });

  it('sets the call, transfer and analysis extensions, and null clears one', () => {
    const update: SessionUpdate = {
      agent_name: 'Ava',
      call_direction: 'OUTBOUND',
      call_status: 'ANSWERED',
      outbound_phone_number: '+15551230001',
      transferred_to: '+15551230002',
      transfer_type: 'WARM',
      transfer_timestamp: T0 + 3_000,
      analysis: { sentiment: 'positive' },
    };
    const session = changed(makeSession(), update);
    expect(session).toMatchObject(update);
    expect(changed(session, { transferred_to: null }).transferred_to).toBeNull();
  });

  it('sets ended_at and duration without a status change', () => {
    expect(changed(makeSession(), { duration: 12 })).toMatchObject({ status: 'ACTIVE', duration: 12 });
  });

  it('refuses metadata that would grow session_data past its bound, counted in UTF-8 bytes of its JSON', () => {
    const session = makeSession({ session_data: { a: 'é'.repeat(MAX_SESSION_DATA_BYTES / 4) } });
    const fits = { b: 'x'.repeat(MAX_SESSION_DATA_BYTES / 2 - 20) };
    expect(jsonBytes(changed(session, { metadata: fits }).session_data)).toBeLessThanOrEqual(MAX_SESSION_DATA_BYTES);
    const grown = { b: 'x'.repeat(MAX_SESSION_DATA_BYTES / 2) };
    expect(applySessionUpdate(session, { metadata: grown }, T0 + 1)).toEqual({
      kind: 'too_large',
      fields: [{ field: 'session_data', bytes: jsonBytes({ ...session.session_data, ...grown }) }],
    });
  });

  it('refuses an analysis past its bound, counted in UTF-8 bytes of its JSON, and takes one at the bound', () => {
    const atBound = { a: '😀'.repeat((MAX_ANALYSIS_BYTES - '{"a":""}'.length) / 4) };
    expect(jsonBytes(atBound)).toBe(MAX_ANALYSIS_BYTES);
    expect(changed(makeSession(), { analysis: atBound }).analysis).toEqual(atBound);
    const over = { a: `${atBound.a}x` };
    expect(applySessionUpdate(makeSession(), { analysis: over }, T0 + 1)).toEqual({
      kind: 'too_large',
      fields: [{ field: 'analysis', bytes: MAX_ANALYSIS_BYTES + 1 }],
    });
  });

  it('reports session_data and analysis both when both pass their bounds, in that order', () => {
    const big = { a: 'x'.repeat(MAX_SESSION_DATA_BYTES) };
    expect(
      applySessionUpdate(makeSession(), { metadata: big, analysis: big, call_status: 'ANSWERED' }, T0 + 1),
    ).toMatchObject({
      kind: 'too_large',
      fields: [{ field: 'session_data' }, { field: 'analysis' }],
    });
  });

  it('lets a session whose analysis is already past the bound take other changes, and clear it', () => {
    const session = makeSession({ analysis: { a: 'x'.repeat(MAX_ANALYSIS_BYTES) } });
    expect(changed(session, { metadata: { k: 1 } }).session_data).toEqual({ k: 1 });
    expect(changed(session, { analysis: null }).analysis).toBeNull();
  });

  it('lets a session already past the bound take changes that leave session_data alone', () => {
    const session = makeSession({ session_data: { a: 'x'.repeat(MAX_SESSION_DATA_BYTES) } });
    expect(changed(session, { call_status: 'ANSWERED' }).call_status).toBe('ANSWERED');
    expect(applySessionUpdate(session, { metadata: { a: 'x'.repeat(MAX_SESSION_DATA_BYTES) } }, T0 + 1)).toEqual({
      kind: 'unchanged',
    });
  });
});

describe('endSessionByRoom', () => {
  it('completes an ACTIVE session now with its duration', () => {
    expect(endSessionByRoom(makeSession(), T0 + 30_500)).toMatchObject({
      status: 'COMPLETED',
      ended_at: T0 + 30_500,
      duration: 30,
      version: 2,
    });
  });

  it.each(['CREATED', 'COMPLETED', 'FAILED'] as const)('returns a %s session unchanged', (status) => {
    const session = makeSession({ status });
    expect(endSessionByRoom(session, T0 + 30_500)).toBe(session);
  });
});
