import type { BudgetRecord } from '../../../schemas/records/budget.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import { periodBoundsAt } from './budget-math.ts';

/** A period budget's spend so far in its current period. */
export interface PeriodSpend {
  readonly spent: Exact;
  readonly start: number;
  readonly end: number;
}

interface SpendRow {
  readonly agent_id: string;
  readonly provider: string;
  readonly service: string;
  readonly cost: string;
}

function covers(budget: BudgetRecord, row: { agent_id: string; provider: string; service: string }): boolean {
  return (
    (budget.agent_id === null || budget.agent_id === row.agent_id) &&
    (budget.filter.provider === undefined || budget.filter.provider === row.provider) &&
    (budget.filter.service === undefined || budget.filter.service === row.service)
  );
}

/**
 * The spend of each period budget in its current period at `nowMs`, exact: one read of the 15-minute
 * rollup per tenant and period start (every zone's days, weeks and months are unions of its quarter
 * hours), summed per agent, provider and service, from which each budget takes what it covers; a
 * budget filtered by model reads usage_events (the rollup has no model). Per-call caps are left out.
 */
export async function periodSpends(
  ch: ClickHouse,
  budgets: readonly BudgetRecord[],
  nowMs: number,
): Promise<Map<string, PeriodSpend>> {
  const spends = new Map<string, PeriodSpend>();
  const groups = new Map<string, { user: string; start: number; end: number; budgets: BudgetRecord[] }>();
  const boundsOf = periodBoundsAt(nowMs);
  for (const budget of budgets) {
    const bounds = boundsOf(budget);
    if (bounds === null) continue;
    if (budget.filter.model !== undefined) {
      spends.set(budget.id, { ...bounds, spent: await modelSpend(ch, budget, bounds.start, bounds.end) });
      continue;
    }
    const key = `${budget.user_id}\u0000${bounds.start}`;
    const group = groups.get(key) ?? { user: budget.user_id, ...bounds, budgets: [] };
    group.budgets.push(budget);
    groups.set(key, group);
  }
  for (const group of groups.values()) {
    const result = await ch.client.query({
      query: `SELECT agent_id, provider, service, toString(sum(cost)) AS cost FROM ${tableName(ch, 'usageRollup15m')}
        WHERE user_id = {user:String} AND bucket >= toDateTime({start:UInt32}, 'UTC') AND bucket < toDateTime({end:UInt32}, 'UTC')
        GROUP BY agent_id, provider, service`,
      query_params: { user: group.user, start: group.start / 1000, end: group.end / 1000 },
      format: 'JSONEachRow',
    });
    const rows = await result.json<SpendRow>();
    // An agent's budget looks at its agent's rows only: thousands of agents' budgets, each a lookup.
    const byAgent = new Map<string, SpendRow[]>();
    for (const row of rows) byAgent.set(row.agent_id, [...(byAgent.get(row.agent_id) ?? []), row]);
    // One answer shared by every budget nothing of which was spent (most of a tenant's thousands).
    const nothing: PeriodSpend = { spent: new Exact(0), start: group.start, end: group.end };
    for (const budget of group.budgets) {
      const candidates = budget.agent_id === null ? rows : byAgent.get(budget.agent_id);
      const covered = candidates?.filter((row) => covers(budget, row)) ?? [];
      spends.set(
        budget.id,
        covered.length === 0
          ? nothing
          : { spent: Exact.sum(0, ...covered.map((row) => row.cost)), start: group.start, end: group.end },
      );
    }
  }
  return spends;
}

async function modelSpend(ch: ClickHouse, budget: BudgetRecord, start: number, end: number): Promise<Exact> {
  const result = await ch.client.query({
    query: `SELECT toString(sum(toDecimal256(cost, 18))) AS cost FROM ${tableName(ch, 'usageEvents')}
      WHERE user_id = {user:String} AND model = {model:String}
        AND occurred_at >= fromUnixTimestamp64Milli(toInt64({start:Int64}), 'UTC')
        AND occurred_at < fromUnixTimestamp64Milli(toInt64({end:Int64}), 'UTC')
        ${budget.agent_id === null ? '' : 'AND agent_id = {agent:String}'}
        ${budget.filter.provider === undefined ? '' : 'AND provider = {provider:String}'}
        ${budget.filter.service === undefined ? '' : 'AND service = {service:String}'}`,
    query_params: {
      user: budget.user_id,
      model: budget.filter.model,
      start,
      end,
      ...(budget.agent_id === null ? {} : { agent: budget.agent_id }),
      ...(budget.filter.provider === undefined ? {} : { provider: budget.filter.provider }),
      ...(budget.filter.service === undefined ? {} : { service: budget.filter.service }),
    },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ cost: string }>();
  return new Exact(row?.cost ?? 0);
}

/** A call's spend as a per-call cap counts it: its stored usage that the cap covers. */
export interface CallSpend {
  readonly session_id: string;
  readonly agent_id: string;
  readonly spent: Exact;
}

/** The stored spend of each of these calls of one tenant, per what each cap covers (by provider, service, model). */
export async function callSpends(
  ch: ClickHouse,
  cap: Pick<BudgetRecord, 'user_id' | 'agent_id' | 'filter'>,
  sessionIds: readonly string[],
): Promise<CallSpend[]> {
  if (sessionIds.length === 0) return [];
  const result = await ch.client.query({
    query: `SELECT toString(session_id) AS session, agent_id, toString(sum(toDecimal256(cost, 18))) AS cost
      FROM ${tableName(ch, 'usageEvents')}
      WHERE user_id = {user:String} AND toString(session_id) IN {sessions:Array(String)}
        ${cap.agent_id === null ? '' : 'AND agent_id = {agent:String}'}
        ${cap.filter.provider === undefined ? '' : 'AND provider = {provider:String}'}
        ${cap.filter.service === undefined ? '' : 'AND service = {service:String}'}
        ${cap.filter.model === undefined ? '' : 'AND model = {model:String}'}
      GROUP BY session, agent_id`,
    query_params: {
      user: cap.user_id,
      sessions: sessionIds,
      ...(cap.agent_id === null ? {} : { agent: cap.agent_id }),
      ...(cap.filter.provider === undefined ? {} : { provider: cap.filter.provider }),
      ...(cap.filter.service === undefined ? {} : { service: cap.filter.service }),
      ...(cap.filter.model === undefined ? {} : { model: cap.filter.model }),
    },
    format: 'JSONEachRow',
  });
  return (await result.json<{ session: string; agent_id: string; cost: string }>()).map((row) => ({
    session_id: row.session,
    agent_id: row.agent_id,
    spent: new Exact(row.cost),
  }));
}

/**
 * The calls of a tenant with usage stored since `sinceMs`: those a per-call cap this process has just
 * learned of (created, changed, or known anew after a restart) is checked against.
 */
export async function recentCalls(ch: ClickHouse, userId: string, sinceMs: number): Promise<string[]> {
  const result = await ch.client.query({
    query: `SELECT DISTINCT toString(session_id) AS session
      FROM ${tableName(ch, 'usageEvents')}
      WHERE user_id = {user:String} AND stored_at >= fromUnixTimestamp64Milli({since:Int64})`,
    query_params: { user: userId, since: sinceMs },
    format: 'JSONEachRow',
  });
  return (await result.json<{ session: string }>()).map((row) => row.session);
}
