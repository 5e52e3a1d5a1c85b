import { sessionKey, type SessionMark, type UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';

/**
 * Marks the rows of a round that first store each of its sessions (session_first) and each session
 * under each agent (agent_session_first, migration 021), so that the summary's count of a tenant's
 * sessions with usage, and by-agent's over all time, are sums kept as usage is stored, not exact counts
 * of distinct ids at each read. Each is marked once: by the round that first stores a row of it, on its
 * earliest row there (by when it happened, then by id). `marked` holds the rows marked already, by
 * sessionKey (`storedSessionMarks`): what they mark is counted, unless the marked row is one of the
 * round's own, a replay of the round that marked it (its rows are the same, its insert too), which
 * marks that row again.
 */
export function markSessionFirsts<R extends { readonly row: UsageEventRow }>(
  rows: readonly R[],
  marked: ReadonlyMap<string, readonly SessionMark[]>,
): R[] {
  const sessions = new Map<string, number>();
  const agents = new Map<string, number>();
  const pick = (picks: Map<string, number>, key: string, stored: readonly SessionMark[], i: number) => {
    const { row } = rows[i]!;
    if (stored.length > 0) {
      if (!picks.has(key) && stored.some((mark) => mark.event_id === row.id)) picks.set(key, i);
      return;
    }
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
      JSON.stringify([key, row.agent_id]),
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

function earlier(a: UsageEventRow, b: UsageEventRow): boolean {
  const at = Date.parse(a.occurred_at) - Date.parse(b.occurred_at);
  return at < 0 || (at === 0 && a.id < b.id);
}
