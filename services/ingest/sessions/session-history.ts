import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { SessionField } from '../../../schemas/records/session.ts';
import { fieldKind, SESSION_FIELDS, type FieldKind } from './session-shape.ts';
import type { Session } from './session.ts';
import type { SessionListQuery, SessionPage } from './session-store.ts';

// The columns are the session's fields (session-shape.ts). Datetimes leave ClickHouse as epoch
// milliseconds, the unit the domain keeps them in, and the id as text. Their aliases differ from the
// column names: ClickHouse would otherwise resolve WHERE and ORDER BY to them.
const CONVERTED: Readonly<Partial<Record<FieldKind, { readonly read: string; readonly alias: string }>>> = {
  'date-time': { read: 'toUnixTimestamp64Milli', alias: '_ms' },
  uuid: { read: 'toString', alias: '_text' },
};
const aliasOf = (field: SessionField) => `${field}${CONVERTED[fieldKind(field)]?.alias ?? ''}`;
const columnOf = (field: SessionField) => {
  const converted = CONVERTED[fieldKind(field)];
  return converted === undefined ? field : `${converted.read}(${field}) AS ${aliasOf(field)}`;
};
const SESSION_COLUMNS = SESSION_FIELDS.map(columnOf).join(', ');

type SessionRow = Readonly<Record<string, string | number | null>>;

/** The latest stored version of sessions: what the record path wrote, read when live state lacks it. */
export class SessionHistory {
  constructor(private readonly ch: ClickHouse) {}

  async byId(id: string): Promise<Session | null> {
    if (!/^[0-9a-fA-F-]{32,36}$/.test(id)) return null;
    const rows = await this.select(`WHERE id = toUUIDOrZero({id:String}) ORDER BY version DESC LIMIT 1`, { id });
    return rows[0] ?? null;
  }

  /** The room's latest session of this tenant, or of any tenant when `userId` is null. */
  async byRoom(roomName: string, userId: string | null): Promise<Session | null> {
    // A search of the room's key range in sessions_by_room (011), not a scan of sessions (ordered by id).
    const tenant = userId === null ? '' : 'AND user_id = {user:String} ';
    const rows = await this.select(
      `WHERE room_name = {room:String} ${tenant}ORDER BY created_at DESC, version DESC LIMIT 1`,
      { room: roomName, user: userId ?? '' },
      tableName(this.ch, 'sessionsByRoom'),
    );
    return rows[0] ?? null;
  }

  /**
   * The room's sessions, of any tenant, whose latest stored version is live (CREATED or ACTIVE) and
   * was written since `sinceMs`: older ones have left the live store as idle, so they hold no room.
   */
  async liveInRoom(roomName: string, sinceMs: number): Promise<{ id: string; user_id: string }[]> {
    const result = await this.ch.client.query({
      query:
        `SELECT toString(id) AS id, any(user_id) AS user_id FROM ${tableName(this.ch, 'sessionsByRoom')} ` +
        `WHERE room_name = {room:String} GROUP BY id ` +
        `HAVING argMax(status, version) IN ('CREATED', 'ACTIVE') ` +
        `AND argMax(updated_at, version) >= fromUnixTimestamp64Milli({since:Int64})`,
      query_params: { room: roomName, since: sinceMs },
      format: 'JSONEachRow',
    });
    return result.json<{ id: string; user_id: string }>();
  }

  async list(userId: string, query: SessionListQuery): Promise<SessionPage> {
    const params = {
      user: userId,
      start: query.start_ms ?? 0,
      end: query.end_ms ?? 253402300799999,
      limit: query.limit,
      offset: (query.page - 1) * query.limit,
    };
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
      this.select(
        `WHERE ${outer} ORDER BY created_at DESC, id DESC LIMIT {limit:UInt32} OFFSET {offset:UInt64}`,
        filtered,
        source,
      ),
      this.ch.client.query({
        query: `SELECT count() AS total FROM ${source} WHERE ${outer}`,
        query_params: filtered,
        format: 'JSONEachRow',
      }),
    ]);
    const [total] = await counted.json<{ total: string }>();
    return { sessions, total: Number(total?.total ?? 0) };
  }

  private async select(
    clause: string,
    params: Record<string, unknown>,
    table = tableName(this.ch, 'sessions'),
  ): Promise<Session[]> {
    const result = await this.ch.client.query({
      query: `SELECT ${SESSION_COLUMNS} FROM ${table} ${clause}`,
      query_params: params,
      format: 'JSONEachRow',
    });
    return (await result.json<SessionRow>()).map(toSession);
  }
}

function toSession(row: SessionRow): Session {
  return Object.fromEntries(
    SESSION_FIELDS.map((field) => [field, fromColumn(field, row[aliasOf(field)] ?? null)]),
  ) as Session;
}

// Integers and datetimes may leave ClickHouse quoted (64-bit); objects are stored as JSON text.
function fromColumn(field: SessionField, value: string | number | null): unknown {
  if (value === null) return null;
  const kind = fieldKind(field);
  if (kind === 'date-time' || kind === 'integer') return Number(value);
  if (kind === 'object') return JSON.parse(String(value)) as unknown;
  return kind === 'uuid' ? String(value) : value;
}
