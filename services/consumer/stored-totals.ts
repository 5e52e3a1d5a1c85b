import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { TABLES, tableName, type TableKey } from '../shared/clickhouse/tables.ts';

/** Every table a usage_events insert feeds through a materialized view that counts events and cost. */
export const USAGE_ROLLUPS = [
  'usageRollup15m',
  'usageTotals15m',
  'usageTotalsDaily',
  'usageByAgentDaily',
  'usageBySession',
] as const satisfies readonly TableKey[];

export type StoredTotals = Record<string, { n: string; cost?: string }>;

/**
 * The event count and cost sum of usage_events, of every rollup and of the event-id table (by table
 * name), so that a test can check that a replay or a retry was counted once everywhere, not only in
 * the table it happens to read; of one tenant only when `userId` is given (a check beside a tenant
 * that keeps posting). A full scan of each: for tests and the fault suite, not for serving.
 */
export async function storedTotals(ch: ClickHouse, userId: string | null = null): Promise<StoredTotals> {
  const where = userId === null ? '' : ' WHERE user_id = {user:String}';
  const one = async (sql: string) =>
    (
      await (
        await ch.client.query({
          query: `${sql}${where}`,
          ...(userId === null ? {} : { query_params: { user: userId } }),
          format: 'JSONEachRow',
        })
      ).json<{ n: string; cost?: string }>()
    )[0]!;
  const totals: StoredTotals = {};
  totals.usage_events = await one(
    `SELECT toString(sum(toInt64(weight))) AS n, toString(sum(toDecimal256(cost, 18))) AS cost FROM ${tableName(ch, 'usageEvents')}`,
  );
  for (const table of USAGE_ROLLUPS) {
    totals[TABLES[table]] = await one(
      `SELECT toString(sum(events)) AS n, toString(sum(cost)) AS cost FROM ${tableName(ch, table)}`,
    );
  }
  totals[TABLES.usageEventIds] = await one(`SELECT toString(count()) AS n FROM ${tableName(ch, 'usageEventIds')}`);
  return totals;
}

export interface SessionCounts {
  /** Distinct (user, session) pairs of usage_events. */
  readonly sessions: number;
  /** usage_events rows marked session_first. */
  readonly marked: number;
  /** The sum of usage_session_starts' sessions, which the summary reads. */
  readonly starts: number;
  /** The rows of usage_session_firsts marking a session, which the writer asks. */
  readonly firsts: number;
  /** Distinct (user, session, agent) of usage_events, and the same four ways as above under each agent. */
  readonly agent_sessions: number;
  readonly agent_marked: number;
  readonly agent_starts: number;
  readonly agent_firsts: number;
}

/**
 * The sessions with usage, and the sessions under each agent, each counted four ways that agree when
 * each is marked once (migration 021): for tests beside storedTotals; a full scan of each table.
 */
export async function storedSessionCounts(ch: ClickHouse, userId: string | null = null): Promise<SessionCounts> {
  const where = userId === null ? '' : ' WHERE user_id = {user:String}';
  const one = async (sql: string) => {
    const result = await ch.client.query({
      query: `${sql}${where}`,
      ...(userId === null ? {} : { query_params: { user: userId } }),
      format: 'JSONEachRow',
    });
    return Object.fromEntries(
      Object.entries((await result.json<Record<string, string>>())[0]!).map(([key, n]) => [key, Number(n)]),
    );
  };
  const events = await one(
    `SELECT toString(uniqExact(user_id, session_id)) AS sessions, toString(sum(session_first)) AS marked,
      toString(uniqExact(user_id, session_id, agent_id)) AS agent_sessions, toString(sum(agent_session_first)) AS agent_marked
    FROM ${tableName(ch, 'usageEvents')}`,
  );
  const starts = await one(
    `SELECT toString(sum(sessions)) AS starts, toString(sum(agent_sessions)) AS agent_starts FROM ${tableName(ch, 'usageSessionStarts')}`,
  );
  const firsts = await one(
    `SELECT toString(countIf(session_first = 1)) AS firsts, toString(countIf(agent_session_first = 1)) AS agent_firsts
    FROM ${tableName(ch, 'usageSessionFirsts')}`,
  );
  return { ...events, ...starts, ...firsts } as unknown as SessionCounts;
}
