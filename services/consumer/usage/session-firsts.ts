import { sessionKey, type SessionMark, type UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';

/**
 * Marks the rows of a round that first store each of its sessions (session_first) and each session
 * under each agent (agent_session_first, migration 021), so that the summary's count of a tenant's
 * sessions with usage, and by-agent's over all time, are sums kept as usage is stored, not exact counts
 * of distinct ids at each read. Each is marked once: by the round that first stores a row of it, on its
 * earliest row there (by when it happened, then by id). `marked` holds the rows marked already, by
 * sessionKey (`storedSessionMarks`): what they mark is counted, unless the marked row is one of the
 * round's own, a replay of the round that marked it (its rows are the same, its insert too), which
 * marks that row again. One that `counted` holds (found marked by an earlier lookup) and that was not
 * looked up for this round is counted too.
 */
export function markSessionFirsts<R extends { readonly row: UsageEventRow }>(
  rows: readonly R[],
  marked: ReadonlyMap<string, readonly SessionMark[]>,
  counted: CountedSessions = new CountedSessions(0),
): R[] {
  const sessions = new Map<string, number>();
  const agents = new Map<string, number>();
  const pick = (picks: Map<string, number>, key: string, stored: readonly SessionMark[], i: number) => {
    const { row } = rows[i]!;
    if (stored.length > 0) {
      if (!picks.has(key) && stored.some((mark) => mark.event_id === row.id)) picks.set(key, i);
      return;
    }
    if (counted.has(key)) return;
    const current = picks.get(key);
    if (current === undefined || earlier(row, rows[current]!.row)) picks.set(key, i);
  };
  rows.forEach(({ row }, i) => {
    const key = sessionKey(row.user_id, row.session_id);
    const stored = marked.get(key) ?? [];
    pick(
      sessions,
      key,
      stored.filter((mark) => mark.session_first),
      i,
    );
    pick(
      agents,
      agentKey(key, row.agent_id),
      stored.filter((mark) => mark.agent_session_first && mark.agent_id === row.agent_id),
      i,
    );
  });
  const firsts = new Set(sessions.values());
  const agentFirsts = new Set(agents.values());
  return rows.map((entry, i) =>
    firsts.has(i) || agentFirsts.has(i)
      ? {
          ...entry,
          row: {
            ...entry.row,
            session_first: firsts.has(i) ? 1 : 0,
            agent_session_first: agentFirsts.has(i) ? 1 : 0,
          },
        }
      : entry,
  );
}

/** A session's key under one of its agents (the agent id may hold any character). */
export function agentKey(sessionKey: string, agentId: string): string {
  return JSON.stringify([sessionKey, agentId]);
}

/**
 * The sessions, and sessions under an agent, this process found marked in usage_session_firsts: a mark
 * is never taken back (a rebuild of the views makes it again from usage_events), so a round whose
 * sessions are all here needs no lookup. Only marks read from the table are kept, never a round's own
 * before it is stored: a replay of that round must find its marked row. At most `max`, the least
 * recently seen dropped first (a call's usage comes in a few minutes, then no more).
 */
export class CountedSessions {
  private readonly keys = new Map<string, true>();

  constructor(private readonly max: number) {}

  has(key: string): boolean {
    if (!this.keys.has(key)) return false;
    this.keys.delete(key);
    this.keys.set(key, true);
    return true;
  }

  /** Every session, and session under its agent, that `marks` (a lookup's answer) says is counted. */
  remember(marks: ReadonlyMap<string, readonly SessionMark[]>): void {
    for (const [key, stored] of marks)
      for (const mark of stored) {
        if (mark.session_first) this.add(key);
        if (mark.agent_session_first) this.add(agentKey(key, mark.agent_id));
      }
  }

  private add(key: string): void {
    this.keys.delete(key);
    this.keys.set(key, true);
    if (this.keys.size > this.max) this.keys.delete(this.keys.keys().next().value!);
  }
}

function earlier(a: UsageEventRow, b: UsageEventRow): boolean {
  const at = Date.parse(a.occurred_at) - Date.parse(b.occurred_at);
  return at < 0 || (at === 0 && a.id < b.id);
}
