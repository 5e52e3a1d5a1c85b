import type { SessionStatus } from '../../../schemas/records/session.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import type { CostDimension } from '../../domain/pricing/index.ts';
import type { CostSource } from '../../domain/pricing/index.ts';
import type { CostLine } from '../cost-tally.ts';
import type { Read } from './together.ts';

/**
 * The read of how many sessions of the user had usage (one row, `session_total`): the sum of usage_session_starts,
 * one for each session's row marked session_first (migration 021), not an exact count of distinct ids at each read.
 */
export function sessionsWithUsageRead(ch: ClickHouse, userId: string): Read {
  return {
    sql: `SELECT sum(sessions) AS session_total FROM ${tableName(ch, 'usageSessionStarts')} WHERE user_id = {user:String}`,
    params: { user: userId },
  };
}

/**
 * The read of the stored cost of the user's sessions that are still ACTIVE (one row, `cost_sum`): the user's key
 * range of sessions_by_user and of usage_by_session, no FINAL and no cap on how many calls are live. Only sessions
 * with an ACTIVE row can be ACTIVE now, so the latest version (argMax) is taken for those alone: merges leave few
 * such rows, where a tenant has hundreds of thousands of sessions. The live counters are not read: the consumer
 * writes them after the insert, so they never hold an event ClickHouse lacks, and reading them would cost a Redis
 * read of every event of every live call on each summary. The breakdown of one call still unions its counters by
 * event id.
 */
export function activeSessionsCostRead(ch: ClickHouse, userId: string): Read {
  const sessions = tableName(ch, 'sessionsByUser');
  return {
    sql: `SELECT sum(cost) AS cost_sum FROM ${tableName(ch, 'usageBySession')}
      WHERE user_id = {user:String} AND session_id IN (
        SELECT id FROM ${sessions}
        WHERE user_id = {user:String} AND id IN (SELECT id FROM ${sessions} WHERE user_id = {user:String} AND status = 'ACTIVE')
        GROUP BY id HAVING argMax(status, version) = 'ACTIVE'
      )`,
    params: { user: userId },
  };
}

export interface SessionHead {
  readonly id: string;
  readonly user_id: string;
  readonly status: SessionStatus;
  /** Null for a call without an agent. */
  readonly agent_id: string | null;
}

/** The latest stored version of a session, or null. */
export async function sessionHead(ch: ClickHouse, sessionId: string): Promise<SessionHead | null> {
  const result = await ch.client.query({
    query: `SELECT toString(id) AS session_key, user_id, status, agent_id FROM ${tableName(ch, 'sessionsCurrent')} WHERE id = {session:UUID} LIMIT 1`,
    query_params: { session: sessionId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<Omit<SessionHead, 'id'> & { session_key: string }>();
  return row === undefined
    ? null
    : { id: row.session_key, user_id: row.user_id, status: row.status, agent_id: row.agent_id || null };
}

export interface SessionLine extends CostLine {
  readonly provider: string;
  readonly currency: string;
  readonly first_at: string;
  readonly last_at: string;
}

/** A session's costs per provider and service, and when its first and last events happened. */
export async function sessionLines(ch: ClickHouse, userId: string, sessionId: string): Promise<SessionLine[]> {
  const result = await ch.client.query({
    query: `SELECT provider, service, event_type, unit, currency, sum(cost) AS cost_sum, sum(quantity) AS quantity_sum, sum(events) AS events_sum,
        toString(toUnixTimestamp64Milli(min(first_at))) AS first_at, toString(toUnixTimestamp64Milli(max(last_at))) AS last_at
      FROM ${tableName(ch, 'usageBySession')} WHERE user_id = {user:String} AND session_id = {session:UUID}
      GROUP BY provider, service, event_type, unit, currency ORDER BY event_type, provider`,
    query_params: { user: userId, session: sessionId },
    format: 'JSONEachRow',
  });
  return result.json<SessionLine>();
}

/** One stored event as the breakdown reads it: the columns of a usage_events row, its ids as strings, its parts and times. */
export type StoredUsageEvent = Pick<
  UsageEventRow,
  | 'user_id'
  | 'agent_id'
  | 'provider'
  | 'service'
  | 'event_type'
  | 'model'
  | 'quantity'
  | 'unit'
  | 'unit_cost'
  | 'cost'
  | 'reported_unit_cost'
  | 'reported_total_cost'
  | 'input_tokens'
  | 'output_tokens'
> & {
  readonly event_key: string;
  readonly session_key: string;
  readonly cost_source: CostSource;
  /** The priced parts, as stored (migration 012): [dimension, quantity, unit, price, per, cost, rate_id]. */
  readonly parts: readonly (readonly [CostDimension, string, string, string, string, string, string])[];
  readonly occurred_ms: string;
  readonly received_ms: string;
  readonly weight: number;
  /** The correction the row belongs to (migration 016); null for usage as sent. */
  readonly correction_key: string | null;
  readonly correction_kind: '' | 'void' | 'amend';
  readonly correction_of_key: string | null;
  readonly reverses_key: string | null;
  readonly correction_reason: string;
  readonly correction_ms: string | null;
};

/**
 * A session's events, oldest first (a correction's rows, which share their event's instant, after it),
 * at most `limit`: read through the primary key of usage_events (user, time) between the session's
 * first and last event.
 */
export async function sessionEvents(
  ch: ClickHouse,
  userId: string,
  sessionId: string,
  firstMs: number,
  lastMs: number,
  limit: number,
): Promise<StoredUsageEvent[]> {
  const result = await ch.client.query({
    query: `SELECT toString(id) AS event_key, toString(session_id) AS session_key, user_id, agent_id, provider, service, event_type, model,
        quantity, unit, unit_cost, cost, reported_unit_cost, reported_total_cost, toString(cost_source) AS cost_source,
        input_tokens, output_tokens,
        arrayMap(part -> (part.1, toString(part.2), part.3, toString(part.4), toString(part.5), toString(part.6), part.7), cost_components) AS parts,
        toString(toUnixTimestamp64Milli(occurred_at)) AS occurred_ms, toString(toUnixTimestamp64Milli(received_at)) AS received_ms,
        weight, toString(correction_id) AS correction_key, correction_kind, toString(correction_of) AS correction_of_key,
        toString(reverses) AS reverses_key, correction_reason,
        toString(toUnixTimestamp64Milli(correction_created_at)) AS correction_ms
      FROM ${tableName(ch, 'usageEvents')}
      WHERE user_id = {user:String} AND session_id = {session:UUID}
        AND occurred_at >= fromUnixTimestamp64Milli(toInt64({first:Int64}), 'UTC') AND occurred_at <= fromUnixTimestamp64Milli(toInt64({last:Int64}), 'UTC')
      ORDER BY occurred_at, received_at, id LIMIT {limit:UInt32}`,
    query_params: { user: userId, session: sessionId, first: firstMs, last: lastMs, limit },
    format: 'JSONEachRow',
  });
  return result.json<StoredUsageEvent>();
}

export interface ActiveSession {
  readonly session_key: string;
  readonly room_name: string;
  readonly agent_id: string | null;
  readonly started_ms: string | null;
}

/** The user's sessions that are ACTIVE now (latest version), with what a live view shows of each, oldest first. */
export async function activeSessions(ch: ClickHouse, userId: string): Promise<ActiveSession[]> {
  const sessions = tableName(ch, 'sessionsByUser');
  const result = await ch.client.query({
    query: `SELECT toString(id) AS session_key, argMax(room_name, version) AS room_name, argMax(agent_id, version) AS agent_id,
        toString(toUnixTimestamp64Milli(argMax(started_at, version))) AS started_ms
      FROM ${sessions}
      WHERE user_id = {user:String} AND id IN (SELECT id FROM ${sessions} WHERE user_id = {user:String} AND status = 'ACTIVE')
      GROUP BY id HAVING argMax(status, version) = 'ACTIVE'
      ORDER BY started_ms, session_key`,
    query_params: { user: userId },
    format: 'JSONEachRow',
  });
  return result.json<ActiveSession>();
}

export interface SessionServiceLine extends CostLine {
  readonly session_key: string;
}

/** The stored costs and quantities of the given sessions of one user, per service (one read of usage_by_session). */
export async function sessionsServiceLines(
  ch: ClickHouse,
  userId: string,
  sessionIds: readonly string[],
): Promise<SessionServiceLine[]> {
  if (sessionIds.length === 0) return [];
  const result = await ch.client.query({
    query: `SELECT toString(session_id) AS session_key, service, event_type, unit, sum(cost) AS cost_sum, sum(quantity) AS quantity_sum, sum(events) AS events_sum
      FROM ${tableName(ch, 'usageBySession')} WHERE user_id = {user:String} AND session_id IN {sessions:Array(UUID)}
      GROUP BY session_id, service, event_type, unit`,
    query_params: { user: userId, sessions: sessionIds },
    format: 'JSONEachRow',
  });
  return result.json<SessionServiceLine>();
}
