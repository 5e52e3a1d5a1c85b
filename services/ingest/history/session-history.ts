import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { Session } from '../sessions/session.ts';
import type { SessionListQuery, SessionPage } from '../sessions/session-store.ts';

// Datetimes leave ClickHouse as epoch milliseconds, the unit the domain keeps them in. The aliases
// differ from the column names: ClickHouse would otherwise resolve WHERE and ORDER BY to them.
const SESSION_COLUMNS = `
  toString(id) AS session_id, room_name, status,
  toUnixTimestamp64Milli(started_at) AS started_ms, toUnixTimestamp64Milli(ended_at) AS ended_ms, duration,
  user_id, agent_id, session_data, agent_name, call_direction, outbound_phone_number, call_status, analysis,
  transferred_to, transfer_type, toUnixTimestamp64Milli(transfer_timestamp) AS transfer_ms,
  toUnixTimestamp64Milli(created_at) AS created_ms, toUnixTimestamp64Milli(updated_at) AS updated_ms, version`;

type Renamed = 'id' | 'started_at' | 'ended_at' | 'transfer_timestamp' | 'created_at' | 'updated_at';
type SessionRow = Record<Exclude<keyof Session, Renamed>, string | number | null> &
  Record<'session_id' | 'started_ms' | 'ended_ms' | 'transfer_ms' | 'created_ms' | 'updated_ms', string | number | null>;

/** The latest stored version of sessions: what the record path wrote, read when live state lacks it. */
export class SessionHistory {
  constructor(private readonly ch: ClickHouse) {}

  async byId(id: string): Promise<Session | null> {
    if (!/^[0-9a-fA-F-]{32,36}$/.test(id)) return null;
    const rows = await this.select(`WHERE id = toUUIDOrZero({id:String}) ORDER BY version DESC LIMIT 1`, { id });
    return rows[0] ?? null;
  }

  async byRoom(roomName: string): Promise<Session | null> {
    // A search of the room's key range in sessions_by_room (011), not a scan of sessions (ordered by id).
    const rows = await this.select(`WHERE room_name = {room:String} ORDER BY created_at DESC, version DESC LIMIT 1`, { room: roomName }, tableName(this.ch, 'sessionsByRoom'));
    return rows[0] ?? null;
  }

  async list(userId: string, query: SessionListQuery): Promise<SessionPage> {
    const params = { user: userId, start: query.start_ms ?? 0, end: query.end_ms ?? 253402300799999, limit: query.limit, offset: (query.page - 1) * query.limit };
    const where = `user_id = {user:String} AND created_at BETWEEN fromUnixTimestamp64Milli({start:Int64}) AND fromUnixTimestamp64Milli({end:Int64})`;
    // The user's key range only: FINAL over sessions_by_user (ordered by user) reads that range, where
    // sessions_current would read every tenant's sessions. user_id and created_at never change
    // between versions, so filtering before the latest version is chosen picks the same sessions.
    const table = `${tableName(this.ch, 'sessionsByUser')} FINAL`;
    // call_direction changes between versions: it is filtered on the latest version, outside FINAL.
    const source = query.direction === undefined ? table : `(SELECT * FROM ${table} WHERE ${where})`;
    const outer = query.direction === undefined ? where : `${where} AND call_direction = {direction:String}`;
    const filtered = { ...params, direction: query.direction ?? '' };
    const [sessions, counted] = await Promise.all([
      this.select(`WHERE ${outer} ORDER BY created_at DESC, id DESC LIMIT {limit:UInt32} OFFSET {offset:UInt64}`, filtered, source),
      this.ch.client.query({ query: `SELECT count() AS total FROM ${source} WHERE ${outer}`, query_params: filtered, format: 'JSONEachRow' }),
    ]);
    const [total] = await counted.json<{ total: string }>();
    return { sessions, total: Number(total?.total ?? 0) };
  }

  private async select(clause: string, params: Record<string, unknown>, table = tableName(this.ch, 'sessions')): Promise<Session[]> {
    const result = await this.ch.client.query({ query: `SELECT ${SESSION_COLUMNS} FROM ${table} ${clause}`, query_params: params, format: 'JSONEachRow' });
    return (await result.json<SessionRow>()).map(toSession);
  }
}

function toSession(row: SessionRow): Session {
  const ms = (value: string | number | null) => (value === null ? null : Number(value));
  const { session_id, started_ms, ended_ms, transfer_ms, created_ms, updated_ms, ...columns } = row;
  return {
    ...(columns as unknown as Session),
    id: String(session_id),
    started_at: ms(started_ms),
    ended_at: ms(ended_ms),
    duration: ms(row.duration),
    transfer_timestamp: ms(transfer_ms),
    created_at: Number(created_ms),
    updated_at: Number(updated_ms),
    version: Number(row.version),
    session_data: JSON.parse(String(row.session_data)) as Session['session_data'],
    analysis: row.analysis === null ? null : (JSON.parse(String(row.analysis)) as Session['analysis']),
  };
}
