import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { sessionKey, type SessionMark, type UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import { agentKey, CountedSessions, markSessionFirsts } from './session-firsts.ts';

const row = (session: string, minute: number, { user = 'tenant-a', agent = 'agent-1', id = randomUUID() } = {}) =>
  ({
    row: {
      id,
      user_id: user,
      session_id: session,
      agent_id: agent,
      occurred_at: new Date(Date.UTC(2026, 10, 28, 1, minute)).toISOString(),
      session_first: 0,
      agent_session_first: 0,
    } as UsageEventRow,
  }) as const;
/** The ids of the rows marked as a session's first, and as a session's first under its agent. */
const marks = (rows: readonly { row: UsageEventRow }[]) => ({
  session: rows.filter(({ row }) => row.session_first === 1).map(({ row }) => row.id),
  agent: rows.filter(({ row }) => row.agent_session_first === 1).map(({ row }) => row.id),
});
const mark = (
  event_id: string,
  agent_id: string,
  session_first: boolean,
  agent_session_first: boolean,
): SessionMark => ({
  event_id,
  agent_id,
  session_first,
  agent_session_first,
});

describe('marking the rows that first store each session, and each session under each agent', () => {
  it('marks a session nothing marks on its earliest row in the round, once per tenant, and once under each of its agents', () => {
    const [s1, s2] = [randomUUID(), randomUUID()];
    const rows = [
      row(s1, 30),
      row(s1, 10),
      row(s1, 20, { agent: 'agent-2' }),
      row(s2, 20),
      row(s1, 10, { user: 'tenant-b' }),
      row(s1, 5, { user: 'tenant-b' }),
    ];
    const ids = rows.map(({ row }) => row.id);
    expect(marks(markSessionFirsts(rows, new Map()))).toEqual({
      session: [ids[1], ids[3], ids[5]],
      agent: [ids[1], ids[2], ids[3], ids[5]],
    });
  });

  it('breaks a tie of instants by the row id, so a replay picks the same row in any order', () => {
    const session = randomUUID();
    const rows = [
      row(session, 1, { id: 'b0000000-0000-4000-8000-000000000000' }),
      row(session, 1, { id: 'a0000000-0000-4000-8000-000000000000' }),
    ];
    const first = 'a0000000-0000-4000-8000-000000000000';
    expect(marks(markSessionFirsts(rows, new Map()))).toEqual({ session: [first], agent: [first] });
    expect(marks(markSessionFirsts([...rows].reverse(), new Map()))).toEqual({ session: [first], agent: [first] });
  });

  it('marks nothing a row of another round marks, and the same rows again when the round holds them (its replay)', () => {
    const [counted, replayed] = [randomUUID(), randomUUID()];
    const rows = [row(counted, 1), row(counted, 2, { agent: 'agent-2' }), row(replayed, 1), row(replayed, 2)];
    const ids = rows.map(({ row }) => row.id);
    const stored = new Map([
      // The counted session is marked, under agent-1 only, by rows of earlier rounds.
      [sessionKey('tenant-a', counted), [mark(randomUUID(), 'agent-1', true, true)]],
      [sessionKey('tenant-a', replayed), [mark(ids[3]!, 'agent-1', true, true)]],
    ]);
    expect(marks(markSessionFirsts(rows, stored))).toEqual({ session: [ids[3]], agent: [ids[1], ids[3]] });
  });

  it('leaves the rows it does not mark as they are', () => {
    const rows = [row(randomUUID(), 1)];
    const stored = new Map([
      [sessionKey('tenant-a', rows[0]!.row.session_id), [mark(randomUUID(), 'agent-1', true, true)]],
    ]);
    expect(markSessionFirsts(rows, stored)[0]).toBe(rows[0]);
  });

  it('counts a session found marked before and not looked up again; a lookup that finds the round’s own row marks it again', () => {
    const [known, replayed] = [randomUUID(), randomUUID()];
    const rows = [row(known, 1), row(replayed, 1)];
    const counted = new CountedSessions(10);
    counted.remember(
      new Map([
        [sessionKey('tenant-a', known), [mark(randomUUID(), 'agent-1', true, true)]],
        [sessionKey('tenant-a', replayed), [mark(randomUUID(), 'agent-1', true, true)]],
      ]),
    );
    const stored = new Map([[sessionKey('tenant-a', replayed), [mark(rows[1]!.row.id, 'agent-1', true, true)]]]);
    const id = rows[1]!.row.id;
    expect(marks(markSessionFirsts(rows, stored, counted))).toEqual({ session: [id], agent: [id] });
  });
});

describe('the sessions a writer found counted', () => {
  it('remembers each mark a lookup read, a session alone or under its agent, the least recently seen dropped past its size', () => {
    const counted = new CountedSessions(2);
    const [a, b, c] = ['a', 'b', 'c'].map((name) => sessionKey('tenant-a', name));
    counted.remember(
      new Map([
        [a!, [mark(randomUUID(), 'agent-1', true, false)]],
        [b!, [mark(randomUUID(), 'agent-2', false, true)]],
      ]),
    );
    expect([counted.has(a!), counted.has(agentKey(a!, 'agent-1')), counted.has(agentKey(b!, 'agent-2'))]).toEqual([
      true,
      false,
      true,
    ]);
    // a was seen last but one: c pushes it out.
    counted.remember(new Map([[c!, [mark(randomUUID(), 'agent-1', true, false)]]]));
    expect([counted.has(a!), counted.has(agentKey(b!, 'agent-2')), counted.has(c!)]).toEqual([false, true, true]);
  });
});
