import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from './api.ts';

interface SessionEntry {
  readonly user: string;
  readonly agent: string | null;
  total: Exact;
  /** Its events that count (accepted, not voided); addTotal's come without a count. */
  events: number;
}

interface AcceptedEvent {
  readonly session: SessionEntry;
  /** Its cost in force; null once voided. */
  cost: Exact | null;
}

const plain = (value: Exact | string) => new Exact(value).toFixed();

/**
 * The exact cost every tenant's views must show: each session's accepted events, an event id counted
 * once per user however often that user resends it (another user's event of the same id is its own),
 * each at its cost as corrected (an amend's new cost; a voided event at nothing and not counted).
 */
export class CostLedger {
  private readonly sessions = new Map<string, SessionEntry>();
  /** Each accepted event, by user and id. */
  private readonly accepted = new Map<string, AcceptedEvent>();

  addSession(id: string, user: string, agent: string | null): void {
    this.sessions.set(id, { user, agent, total: new Exact(0), events: 0 });
  }

  /** Records an event the API accepted; a resend of an id the same user had accepted adds nothing. */
  accept(sessionId: string, eventId: string, cost: Exact): void {
    const session = this.session(sessionId);
    const key = `${session.user}\u0000${eventId}`;
    if (this.accepted.has(key)) return;
    this.accepted.set(key, { session, cost });
    session.total = session.total.plus(cost);
    session.events += 1;
  }

  /** An accepted event amended: it counts at `cost` from now on. */
  amend(user: string, eventId: string, cost: Exact): void {
    const [event, was] = this.corrected(user, eventId);
    event.session.total = event.session.total.minus(was).plus(cost);
    event.cost = cost;
  }

  /** An accepted event voided: neither its cost nor the event counts any more. */
  void(user: string, eventId: string): void {
    const [event, was] = this.corrected(user, eventId);
    event.session.total = event.session.total.minus(was);
    event.session.events -= 1;
    event.cost = null;
  }

  /** Adds a total accepted outside the ledger's own events (the steady tenant keeps its own). */
  addTotal(sessionId: string, cost: Exact): void {
    const session = this.session(sessionId);
    session.total = session.total.plus(cost);
  }

  users(): string[] {
    return [...new Set([...this.sessions.values()].map((entry) => entry.user))];
  }

  /**
   * What each view of one user must read: the summary and timeline total, by agent, without agent, per
   * session; and the events each counts, of the ledger's own (not addTotal's).
   */
  expected(user: string) {
    const own = [...this.sessions.entries()].filter(([, entry]) => entry.user === user);
    const sum = (entries: typeof own) => plain(Exact.sum(0, ...entries.map(([, entry]) => entry.total)));
    return {
      total: sum(own),
      by_agent: sum(own.filter(([, entry]) => entry.agent !== null)),
      sessions: Object.fromEntries(own.map(([id, entry]) => [id, plain(entry.total)])),
      event_count: own.reduce((count, [, entry]) => count + entry.events, 0),
      session_events: Object.fromEntries(own.map(([id, entry]) => [id, entry.events])),
    };
  }

  private session(id: string): SessionEntry {
    const session = this.sessions.get(id);
    if (session === undefined) throw new Error(`ledger: unknown session ${id}`);
    return session;
  }

  /** An accepted event about to be corrected, and its cost until then. */
  private corrected(user: string, eventId: string): [AcceptedEvent, Exact] {
    const event = this.accepted.get(`${user}\u0000${eventId}`);
    if (event === undefined) throw new Error(`ledger: ${eventId} of ${user} was not accepted`);
    if (event.cost === null) throw new Error(`ledger: ${eventId} of ${user} is voided already`);
    return [event, event.cost];
  }
}

/** Opens a session of `user` (in a room of its own) through `ingestUrl` and adds it to the ledger; its id. */
export async function openLedgerSession(
  ingestUrl: string,
  ledger: CostLedger,
  user: string,
  agent: string | null = `agent-${user}`,
): Promise<string> {
  const answer = await call<{ id: string }>(ingestUrl, 'POST', '/api/sessions/', {
    room_name: `${user}-${randomUUID()}`,
    user_id: user,
    agent_id: agent,
  });
  expect(answer.status).toBe(201);
  ledger.addSession(answer.body.id, user, agent);
  return answer.body.id;
}

/**
 * Every cost view of one user as the dashboard reads it, each total exact and none negative; and the
 * events the summary and each breakdown count.
 */
export async function readViews(queryUrl: string, user: string, sessionIds: readonly string[]) {
  const get = async <T>(path: string) => {
    const answer = await call<T>(queryUrl, 'GET', path, undefined, { 'x-user-id': user });
    expect([path, answer.status]).toEqual([path, 200]);
    return answer.body;
  };
  const summary = await get<{ total_cost: string; event_count: number }>('/api/costs/summary');
  const timeline = await get<{ total_cost: string }[]>('/api/costs/timeline');
  const byAgent = await get<{ total_cost: string }[]>('/api/costs/by-agent?limit=1000');
  const breakdowns = await Promise.all(
    sessionIds.map(
      async (id) =>
        [id, await get<{ total_cost: string; event_count: number }>(`/api/sessions/${id}/cost-breakdown`)] as const,
    ),
  );
  const all = [
    summary.total_cost,
    ...timeline.map((point) => point.total_cost),
    ...byAgent.map((agent) => agent.total_cost),
    ...breakdowns.map(([, breakdown]) => breakdown.total_cost),
  ];
  expect(
    all.filter((cost) => new Exact(cost).isNegative()),
    `negative costs of ${user}`,
  ).toEqual([]);
  const sum = (items: { total_cost: string }[]) => plain(Exact.sum(0, ...items.map((item) => item.total_cost)));
  return {
    total: plain(summary.total_cost),
    timeline: sum(timeline),
    by_agent: sum(byAgent),
    sessions: Object.fromEntries(breakdowns.map(([id, breakdown]) => [id, plain(breakdown.total_cost)])),
    event_count: summary.event_count,
    session_events: Object.fromEntries(breakdowns.map(([id, breakdown]) => [id, breakdown.event_count])),
  };
}

/**
 * Asserts that every view of each user equals the ledger, exactly, once the pipeline has caught up;
 * with `eventCounts`, the events counted by the summary and by each session's breakdown too (for users
 * whose every event went through `accept`).
 */
export async function expectViewsExact(
  ledger: CostLedger,
  queryUrl: string,
  users: readonly string[],
  eventually: <T>(check: () => Promise<T>) => Promise<T>,
  { eventCounts = false }: { readonly eventCounts?: boolean } = {},
): Promise<void> {
  for (const user of users) {
    await eventually(async () => {
      const expected = ledger.expected(user);
      const { event_count, session_events, ...views } = await readViews(queryUrl, user, Object.keys(expected.sessions));
      const costs = {
        total: expected.total,
        timeline: expected.total,
        by_agent: expected.by_agent,
        sessions: expected.sessions,
      };
      const counts = { event_count: expected.event_count, session_events: expected.session_events };
      if (eventCounts) expect({ ...views, event_count, session_events }, user).toEqual({ ...costs, ...counts });
      else expect(views, user).toEqual(costs);
    });
  }
}
