import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from './api.ts';

interface SessionEntry {
  readonly user: string;
  readonly agent: string | null;
  total: Exact;
}

const plain = (value: Exact | string) => new Exact(value).toFixed();

/**
 * The exact cost every tenant's views must show: each session's accepted events, an event id counted
 * once per user however often that user resends it (another user's event of the same id is its own).
 */
export class CostLedger {
  private readonly sessions = new Map<string, SessionEntry>();
  private readonly accepted = new Set<string>();

  addSession(id: string, user: string, agent: string | null): void {
    this.sessions.set(id, { user, agent, total: new Exact(0) });
  }

  /** Records an event the API accepted; a resend of an id the same user had accepted adds nothing. */
  accept(sessionId: string, eventId: string, cost: Exact): void {
    const session = this.sessions.get(sessionId);
    if (session === undefined) throw new Error(`ledger: unknown session ${sessionId}`);
    const key = `${session.user}\u0000${eventId}`;
    if (this.accepted.has(key)) return;
    this.accepted.add(key);
    session.total = session.total.plus(cost);
  }

  /** Adds a total accepted outside the ledger's own events (the steady tenant keeps its own). */
  addTotal(sessionId: string, cost: Exact): void {
    this.sessions.get(sessionId)!.total = this.sessions.get(sessionId)!.total.plus(cost);
  }

  users(): string[] {
    return [...new Set([...this.sessions.values()].map((entry) => entry.user))];
  }

  /** What each view of one user must read: the summary and timeline total, by agent, without agent, per session. */
  expected(user: string) {
    const own = [...this.sessions.entries()].filter(([, entry]) => entry.user === user);
    const sum = (entries: typeof own) => plain(Exact.sum(0, ...entries.map(([, entry]) => entry.total)));
    return {
      total: sum(own),
      by_agent: sum(own.filter(([, entry]) => entry.agent !== null)),
      sessions: Object.fromEntries(own.map(([id, entry]) => [id, plain(entry.total)])),
    };
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

/** Every cost view of one user as the dashboard reads it, each total exact and none negative. */
export async function readViews(queryUrl: string, user: string, sessionIds: readonly string[]) {
  const get = async <T>(path: string) => {
    const answer = await call<T>(queryUrl, 'GET', path, undefined, { 'x-user-id': user });
    expect([path, answer.status]).toEqual([path, 200]);
    return answer.body;
  };
  const summary = await get<{ total_cost: string }>('/api/costs/summary');
  const timeline = await get<{ total_cost: string }[]>('/api/costs/timeline');
  const byAgent = await get<{ total_cost: string }[]>('/api/costs/by-agent?limit=1000');
  const breakdowns = await Promise.all(
    sessionIds.map(
      async (id) => [id, (await get<{ total_cost: string }>(`/api/sessions/${id}/cost-breakdown`)).total_cost] as const,
    ),
  );
  const all = [
    summary.total_cost,
    ...timeline.map((point) => point.total_cost),
    ...byAgent.map((agent) => agent.total_cost),
    ...breakdowns.map(([, cost]) => cost),
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
    sessions: Object.fromEntries(breakdowns.map(([id, cost]) => [id, plain(cost)])),
  };
}

/** Asserts that every view of each user equals the ledger, exactly, once the pipeline has caught up. */
export async function expectViewsExact(
  ledger: CostLedger,
  queryUrl: string,
  users: readonly string[],
  eventually: <T>(check: () => Promise<T>) => Promise<T>,
): Promise<void> {
  for (const user of users) {
    await eventually(async () => {
      const expected = ledger.expected(user);
      const views = await readViews(queryUrl, user, Object.keys(expected.sessions));
      expect(views, user).toEqual({
        total: expected.total,
        timeline: expected.total,
        by_agent: expected.by_agent,
        sessions: expected.sessions,
      });
    });
  }
}
