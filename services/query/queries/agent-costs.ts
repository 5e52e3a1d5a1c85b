import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { CostLine } from '../cost-tally.ts';
import type { InstantRange } from '../routes/date-bounds.ts';
import { DAY_MS, splitRange } from './range-split.ts';

export interface AgentLine extends CostLine {
  readonly agent_id: string;
}

export interface AgentTotals {
  readonly agent_id: string;
  readonly cost_sum: string;
  readonly events_sum: string;
  readonly sessions: string;
}

/**
 * The per-agent source over a range: whole UTC days from usage_by_agent_daily, the unaligned edges
 * aggregated from the events into the same shape (sessions as exact uniqExact states, so a session
 * on both sides of a day boundary counts once).
 */
function agentSource(ch: ClickHouse, range: InstantRange): { sql: string; params: Record<string, number> } {
  const split = splitRange(range, DAY_MS, 'day');
  const keys = 'agent_id, service, event_type, unit, currency';
  const sources = [
    split.rollup === null ? null : `SELECT ${keys}, cost AS c, quantity AS q, events AS n, sessions AS s FROM ${tableName(ch, 'usageByAgentDaily')} WHERE user_id = {user:String} AND agent_id != '' AND ${split.rollup}`,
    split.events === null
      ? null
      : `SELECT ${keys}, sum(cost) AS c, sum(quantity) AS q, count() AS n, uniqExactState(session_id) AS s FROM ${tableName(ch, 'usageEvents')}
         WHERE user_id = {user:String} AND agent_id != '' AND (${split.events}) GROUP BY ${keys}`,
  ].filter((source) => source !== null);
  return { sql: sources.join(' UNION ALL '), params: split.params };
}

/** Per agent: cost, events and sessions with usage in the range. */
export async function agentTotals(ch: ClickHouse, userId: string, range: InstantRange): Promise<AgentTotals[]> {
  const source = agentSource(ch, range);
  const result = await ch.client.query({
    query: `SELECT agent_id, sum(c) AS cost_sum, sum(n) AS events_sum, uniqExactMerge(s) AS sessions FROM (${source.sql}) GROUP BY agent_id`,
    query_params: { user: userId, ...source.params },
    format: 'JSONEachRow',
  });
  return result.json<AgentTotals>();
}

/** Per agent and service: cost and quantity in the range. */
export async function agentServiceLines(ch: ClickHouse, userId: string, range: InstantRange): Promise<AgentLine[]> {
  const source = agentSource(ch, range);
  const result = await ch.client.query({
    query: `SELECT agent_id, service, event_type, unit, sum(c) AS cost_sum, sum(q) AS quantity_sum FROM (${source.sql}) GROUP BY agent_id, service, event_type, unit`,
    query_params: { user: userId, ...source.params },
    format: 'JSONEachRow',
  });
  return result.json<AgentLine>();
}

/** The latest name each of the user's agents was given in a session. */
export async function agentNames(ch: ClickHouse, userId: string): Promise<Map<string, string>> {
  const result = await ch.client.query({
    query: `SELECT agent_id, argMax(agent_name, updated_at) AS latest_name FROM ${tableName(ch, 'agentNames')} WHERE user_id = {user:String} GROUP BY agent_id`,
    query_params: { user: userId },
    format: 'JSONEachRow',
  });
  return new Map((await result.json<{ agent_id: string; latest_name: string }>()).map((row) => [row.agent_id, row.latest_name]));
}
