import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** One message to one endpoint as webhook_deliveries holds it (migration 019); the highest version wins. */
export interface DeliveryState {
  readonly endpoint_id: string;
  readonly message_id: string;
  readonly user_id: string;
  readonly type: string;
  /** The exact payload: signed and sent as it is on every attempt. */
  readonly body: string;
  readonly created_ms: number;
  readonly status: 'pending' | 'delivered' | 'failed';
  readonly attempts: number;
  readonly next_attempt_ms: number | null;
  readonly deadline_ms: number;
  readonly version: number;
}

/** One attempt, as webhook_attempts holds it. */
export interface DeliveryAttempt {
  readonly endpoint_id: string;
  readonly message_id: string;
  readonly attempt: number;
  readonly at_ms: number;
  readonly status_code: number | null;
  readonly latency_ms: number;
  readonly error: string | null;
  readonly ok: boolean;
}

const INSERT_SETTINGS = { date_time_input_format: 'best_effort' } as const;
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const ms = (column: string) => `toString(toUnixTimestamp64Milli(${column}))`;

// Aliases never take a column's name: ClickHouse would read the alias in WHERE in the column's place.
const STATE_COLUMNS = `toString(endpoint_id) AS endpoint_key, message_id, user_id, toString(type) AS type_name, body,
  ${ms('created_at')} AS created_ms, toString(status) AS status_name, attempts,
  if(isNull(next_attempt_at), NULL, ${ms('next_attempt_at')}) AS next_attempt_ms, ${ms('deadline')} AS deadline_ms,
  toString(version) AS version`;

type StateRow = Omit<
  DeliveryState,
  'endpoint_id' | 'type' | 'status' | 'created_ms' | 'next_attempt_ms' | 'deadline_ms' | 'version' | 'attempts'
> & {
  endpoint_key: string;
  type_name: string;
  status_name: DeliveryState['status'];
  created_ms: string;
  next_attempt_ms: string | null;
  deadline_ms: string;
  version: string;
  attempts: number | string;
};

function stateOf({ endpoint_key, type_name, status_name, ...row }: StateRow): DeliveryState {
  return {
    ...row,
    endpoint_id: endpoint_key,
    type: type_name,
    status: status_name,
    attempts: Number(row.attempts),
    created_ms: Number(row.created_ms),
    next_attempt_ms: row.next_attempt_ms === null ? null : Number(row.next_attempt_ms),
    deadline_ms: Number(row.deadline_ms),
    version: Number(row.version),
  };
}

/** Writes new versions of deliveries; resolves once ClickHouse has them on disk. */
export async function insertDeliveryStates(ch: ClickHouse, states: readonly DeliveryState[]): Promise<void> {
  if (states.length === 0) return;
  await ch.client.insert({
    table: tableName(ch, 'webhookDeliveries'),
    values: states.map(({ created_ms, next_attempt_ms, deadline_ms, ...state }) => ({
      ...state,
      created_at: iso(created_ms),
      next_attempt_at: iso(next_attempt_ms),
      deadline: iso(deadline_ms),
      updated_at: new Date().toISOString(),
    })),
    format: 'JSONEachRow',
    clickhouse_settings: INSERT_SETTINGS,
  });
}

export async function insertAttempt(ch: ClickHouse, attempt: DeliveryAttempt): Promise<void> {
  const { at_ms, ...rest } = attempt;
  await ch.client.insert({
    table: tableName(ch, 'webhookAttempts'),
    values: [{ ...rest, at: iso(at_ms) }],
    format: 'JSONEachRow',
    clickhouse_settings: INSERT_SETTINGS,
  });
}

/** Whether any delivery of this message was ever written (an emit of it again is then a no-op). */
export async function messageExists(ch: ClickHouse, messageId: string): Promise<boolean> {
  return (await existingMessages(ch, [messageId])).has(messageId);
}

/** The pending deliveries to these endpoints due by `nowMs`, the longest-waiting first. */
export async function readDueDeliveries(
  ch: ClickHouse,
  endpointIds: readonly string[],
  nowMs: number,
  limit: number,
): Promise<DeliveryState[]> {
  if (endpointIds.length === 0) return [];
  const result = await ch.client.query({
    query: `SELECT ${STATE_COLUMNS} FROM ${tableName(ch, 'webhookDeliveries')} FINAL
      WHERE endpoint_id IN {endpoints:Array(UUID)} AND status = 'pending'
        AND next_attempt_at <= fromUnixTimestamp64Milli(toInt64({now:Int64}), 'UTC')
      ORDER BY next_attempt_at LIMIT {limit:UInt32}`,
    query_params: { endpoints: endpointIds, now: nowMs, limit },
    format: 'JSONEachRow',
  });
  return (await result.json<StateRow>()).map(stateOf);
}

/** The latest version of one delivery, or null. */
export async function readDelivery(
  ch: ClickHouse,
  endpointId: string,
  messageId: string,
): Promise<DeliveryState | null> {
  const result = await ch.client.query({
    query: `SELECT ${STATE_COLUMNS} FROM ${tableName(ch, 'webhookDeliveries')} FINAL
      WHERE endpoint_id = {endpoint:UUID} AND message_id = {message:String}`,
    query_params: { endpoint: endpointId, message: messageId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<StateRow>();
  return row === undefined ? null : stateOf(row);
}

/** The endpoint's newest `limit` messages with every attempt of each, newest first. */
export async function readDeliveryLog(
  ch: ClickHouse,
  endpointId: string,
  limit: number,
): Promise<{ state: DeliveryState; attempts: DeliveryAttempt[] }[]> {
  const states = await ch.client.query({
    query: `SELECT ${STATE_COLUMNS} FROM ${tableName(ch, 'webhookDeliveries')} FINAL
      WHERE endpoint_id = {endpoint:UUID} ORDER BY created_at DESC, message_id LIMIT {limit:UInt32}`,
    query_params: { endpoint: endpointId, limit },
    format: 'JSONEachRow',
  });
  const found = (await states.json<StateRow>()).map(stateOf);
  if (found.length === 0) return [];
  const attempts = await ch.client.query({
    query: `SELECT toString(endpoint_id) AS endpoint_key, message_id, attempt, ${ms('at')} AS at_ms, status_code,
        latency_ms, error, ok
      FROM ${tableName(ch, 'webhookAttempts')}
      WHERE endpoint_id = {endpoint:UUID} AND message_id IN {messages:Array(String)} ORDER BY at, attempt`,
    query_params: { endpoint: endpointId, messages: found.map((state) => state.message_id) },
    format: 'JSONEachRow',
  });
  type AttemptRow = Omit<DeliveryAttempt, 'endpoint_id' | 'at_ms' | 'ok' | 'attempt' | 'latency_ms' | 'status_code'> & {
    endpoint_key: string;
    at_ms: string;
    ok: boolean | number;
    attempt: number | string;
    latency_ms: number | string;
    status_code: number | string | null;
  };
  const byMessage = new Map<string, DeliveryAttempt[]>();
  for (const { endpoint_key, ...row } of await attempts.json<AttemptRow>()) {
    const attempt: DeliveryAttempt = {
      ...row,
      endpoint_id: endpoint_key,
      attempt: Number(row.attempt),
      at_ms: Number(row.at_ms),
      latency_ms: Number(row.latency_ms),
      status_code: row.status_code === null ? null : Number(row.status_code),
      ok: row.ok === true || row.ok === 1,
    };
    byMessage.set(row.message_id, [...(byMessage.get(row.message_id) ?? []), attempt]);
  }
  return found.map((state) => ({ state, attempts: byMessage.get(state.message_id) ?? [] }));
}

/** When the oldest message still pending to one of these endpoints was emitted, or null when none is. */
export async function oldestPendingMs(ch: ClickHouse, endpointIds: readonly string[]): Promise<number | null> {
  if (endpointIds.length === 0) return null;
  const result = await ch.client.query({
    query: `SELECT if(count() = 0, NULL, ${ms('min(created_at)')}) AS oldest
      FROM ${tableName(ch, 'webhookDeliveries')} FINAL
      WHERE endpoint_id IN {endpoints:Array(UUID)} AND status = 'pending'`,
    query_params: { endpoints: endpointIds },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ oldest: string | null }>();
  return row?.oldest == null ? null : Number(row.oldest);
}

/**
 * The endpoint's current run of failures: when its first failed attempt since its last success was
 * made, and its latest attempt (null when it has no failure since its last success).
 */
export async function failingSince(
  ch: ClickHouse,
  endpointId: string,
): Promise<{ readonly firstMs: number; readonly lastMs: number } | null> {
  const result = await ch.client.query({
    query: `WITH (SELECT max(at) FROM ${tableName(ch, 'webhookAttempts')} WHERE endpoint_id = {endpoint:UUID} AND ok)
        AS last_ok
      SELECT count() AS n, ${ms('min(at)')} AS first_ms, ${ms('max(at)')} AS last_ms
      FROM ${tableName(ch, 'webhookAttempts')}
      WHERE endpoint_id = {endpoint:UUID} AND NOT ok AND (isNull(last_ok) OR at > last_ok)`,
    query_params: { endpoint: endpointId },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: string | number; first_ms: string; last_ms: string }>();
  return row === undefined || Number(row.n) === 0
    ? null
    : { firstMs: Number(row.first_ms), lastMs: Number(row.last_ms) };
}

/** Which of these messages are in the outbox (for any endpoint). */
export async function existingMessages(ch: ClickHouse, messageIds: readonly string[]): Promise<Set<string>> {
  if (messageIds.length === 0) return new Set();
  const result = await ch.client.query({
    query: `SELECT DISTINCT message_id AS id FROM ${tableName(ch, 'webhookDeliveries')} WHERE message_id IN {ids:Array(String)}`,
    query_params: { ids: messageIds },
    format: 'JSONEachRow',
  });
  return new Set((await result.json<{ id: string }>()).map((row) => row.id));
}
