import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { CostLine } from '../cost-tally.ts';
import type { Read } from './together.ts';
import type { InstantRange } from '../routes/date-bounds.ts';
import { alignRange, DAY_MS, QUARTER_HOUR_MS, splitRange } from './range-split.ts';

// Aliases differ from the column names: ClickHouse would resolve a column to a same-named alias.
// The events' Decimal(38, 18) is widened to the rollups' Decimal(76, 18) before it is summed (migration 010).

export interface AgentLine extends CostLine {
  readonly agent_id: string;
  readonly events_sum: string;
}

/**
 * The read of the costs per agent and service over a range: cost, quantity and events. Whole UTC days come from
 * usage_by_agent_daily, whole quarter hours of the edges from usage_rollup_15m, and what is left of a quarter hour
 * from the events, so that a local day of any zone (a whole number of quarter hours) reads no event. Usage without
 * an agent is left out.
 */
export function agentServiceLinesRead(ch: ClickHouse, userId: string, range: InstantRange): Read {
  const keys = 'agent_id, service, event_type, unit';
  const { inner, edges } = alignRange(range, DAY_MS);
  const days = inner === null ? null : splitRange(inner, DAY_MS, 'day', 'occurred_at', 'd_');
  const quarters = edges.map((edge, i) => splitRange(edge, QUARTER_HOUR_MS, 'bucket', 'occurred_at', `e${i}_`));
  const agentRows = `user_id = {user:String} AND agent_id != ''`;
  const sources = [
    days?.rollup == null
      ? null
      : `SELECT ${keys}, cost AS c, quantity AS q, events AS n FROM ${tableName(ch, 'usageByAgentDaily')} WHERE ${agentRows} AND ${days.rollup}`,
    ...quarters.flatMap((quarter) => [
      quarter.rollup === null
        ? null
        : `SELECT ${keys}, cost AS c, quantity AS q, events AS n FROM ${tableName(ch, 'usageRollup15m')} WHERE ${agentRows} AND ${quarter.rollup}`,
      quarter.events === null
        ? null
        : `SELECT ${keys}, toDecimal256(cost, 18) AS c, toDecimal256(quantity, 18) AS q, toInt64(weight) AS n FROM ${tableName(ch, 'usageEvents')} WHERE ${agentRows} AND (${quarter.events})`,
    ]),
  ].filter((source) => source !== null);
  return {
    sql: `SELECT ${keys}, sum(c) AS cost_sum, sum(q) AS quantity_sum, sum(n) AS events_sum FROM (${sources.join(' UNION ALL ')}) GROUP BY ${keys}`,
    params: { user: userId, ...days?.params, ...Object.assign({}, ...quarters.map((quarter) => quarter.params)) },
  };
}

/** A row of agentSessionsRead. */
export interface AgentSessions {
  readonly agent_id: string;
  readonly session_total: string;
}

/**
 * The read of how many sessions had usage in the range, per agent. Over all time, the sums of usage_session_starts
 * (one for each session's first stored row under the agent, migration 021); over a range, exact sets of whole UTC
 * days from usage_sessions_daily and of the edges from the events, merged, so a session counts once.
 */
export function agentSessionsRead(ch: ClickHouse, userId: string, range: InstantRange): Read {
  if (range.start === null && range.end === null)
    return {
      sql: `SELECT agent_id, sum(agent_sessions) AS session_total FROM ${tableName(ch, 'usageSessionStarts')}
        WHERE user_id = {user:String} AND agent_id != '' GROUP BY agent_id`,
      params: { user: userId },
    };
  const split = splitRange(range, DAY_MS, 'day');
  const sources = [
    split.rollup === null
      ? null
      : `SELECT agent_id, sessions AS s FROM ${tableName(ch, 'usageSessionsDaily')} WHERE user_id = {user:String} AND agent_id != '' AND ${split.rollup}`,
    split.events === null
      ? null
      : `SELECT agent_id, uniqExactState(session_id) AS s FROM ${tableName(ch, 'usageEvents')} WHERE user_id = {user:String} AND agent_id != '' AND (${split.events}) GROUP BY agent_id`,
  ].filter((source) => source !== null);
  return {
    sql: `SELECT agent_id, uniqExactMerge(s) AS session_total FROM (${sources.join(' UNION ALL ')}) GROUP BY agent_id`,
    params: { user: userId, ...split.params },
  };
}

/**
 * The name of each of these agents: the agent's own (its latest version in agents, whoever owns it,
 * as the replaced service read Agent.name by id), else the latest one the user's sessions gave it.
 */
export async function agentNames(
  ch: ClickHouse,
  userId: string,
  agentIds: readonly string[],
): Promise<Map<string, string>> {
  if (agentIds.length === 0) return new Map();
  const result = await ch.client.query({
    query: `SELECT agent_id, argMax(agent_name, rank) AS latest_name FROM (
        SELECT agent_id, agent_name, (0, toUInt64(0), updated_at) AS rank FROM ${tableName(ch, 'agentNames')} WHERE user_id = {user:String} AND agent_id IN {ids:Array(String)}
        UNION ALL
        SELECT id AS agent_id, name AS agent_name, (1, version, updated_at) AS rank FROM ${tableName(ch, 'agents')} WHERE id IN {ids:Array(String)}
      ) GROUP BY agent_id`,
    query_params: { user: userId, ids: agentIds },
    format: 'JSONEachRow',
  });
  return new Map(
    (await result.json<{ agent_id: string; latest_name: string }>()).map((row) => [row.agent_id, row.latest_name]),
  );
}
