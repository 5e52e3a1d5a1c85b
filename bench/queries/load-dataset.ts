import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { createLogger } from '../../services/shared/logger.ts';
import {
  AGENTS,
  EVENTS_PER_SESSION,
  OTHER_USERS,
  SPAN_DAYS,
  SPAN_END_MS,
  type BenchUser,
  type Dataset,
} from './dataset.ts';

const CHUNK = 1_000_000;
const SPAN_MS = SPAN_DAYS * 86_400_000;

/** usage_events rows [offset, offset + count) of a user whose `total` events spread over the year. */
async function insertEvents(
  ch: ClickHouse,
  user: Pick<BenchUser, 'id' | 'index'>,
  total: number,
  offset: number,
  count: number,
): Promise<void> {
  await ch.client.command({
    query: `INSERT INTO ${ch.database}.usage_events
        (id, user_id, agent_id, session_id, provider, service, event_type, quantity, unit, unit_cost, cost, cost_source, currency, occurred_at, received_at, session_first, agent_session_first)
      SELECT
        toUUID(concat(leftPad(lower(hex(toUInt32({user_index:UInt32}))), 8, '0'), '-0000-4000-8000-', leftPad(lower(hex(number)), 12, '0'))) AS id,
        {user:String} AS user_id,
        concat('agent-', toString(intDiv(number, ${EVENTS_PER_SESSION}) % ${AGENTS})) AS agent_id,
        toUUID(concat(leftPad(lower(hex(toUInt32({user_index:UInt32}))), 8, '0'), '-0000-4000-9000-', leftPad(lower(hex(intDiv(number, ${EVENTS_PER_SESSION}))), 12, '0'))) AS session_id,
        ['deepgram', 'google', 'resemble', 'assemblyai'][number % 4 + 1] AS provider,
        ['stt', 'llm', 'tts', 'stt'][number % 4 + 1] AS service,
        ['stt_minutes', 'llm_tokens', 'tts_characters', 'stt_minutes'][number % 4 + 1] AS event_type,
        toDecimal128(number % 97 + 1, 18) AS quantity,
        ['minute', 'token', 'character', 'minute'][number % 4 + 1] AS unit,
        toDecimal128([770000, 86, 4000, 780000][number % 4 + 1], 18) / 100000000 AS unit_cost,
        toDecimal128((number % 97 + 1) * [770000, 86, 4000, 780000][number % 4 + 1], 18) / 100000000 AS cost,
        'computed' AS cost_source, 'USD' AS currency,
        fromUnixTimestamp64Milli(toInt64({span_start:Int64} + intDiv(number * {span:Int64}, {total:Int64})), 'UTC') AS occurred_at,
        occurred_at AS received_at,
        toUInt8(number % ${EVENTS_PER_SESSION} = 0) AS session_first,
        session_first AS agent_session_first
      FROM numbers({offset:UInt64}, {count:UInt64})`,
    query_params: {
      user: user.id,
      user_index: user.index,
      span_start: SPAN_END_MS - SPAN_MS,
      span: SPAN_MS,
      total,
      offset,
      count,
    },
    clickhouse_settings: { max_insert_block_size: '1048576' },
  });
}

/** One session row per session of the user; the last three are still ACTIVE. */
async function insertSessions(ch: ClickHouse, user: BenchUser): Promise<void> {
  const sessions = Math.ceil(user.events / EVENTS_PER_SESSION);
  await ch.client.command({
    query: `INSERT INTO ${ch.database}.sessions
        (id, room_name, status, started_at, user_id, agent_id, session_data, agent_name, created_at, updated_at, version, record_id)
      SELECT
        toUUID(concat(leftPad(lower(hex(toUInt32({user_index:UInt32}))), 8, '0'), '-0000-4000-9000-', leftPad(lower(hex(number)), 12, '0'))) AS id,
        concat('room-', toString(number)), if(number >= {sessions:UInt64} - 3, 'ACTIVE', 'COMPLETED'),
        fromUnixTimestamp64Milli(toInt64({span_start:Int64} + intDiv(number * ${EVENTS_PER_SESSION} * {span:Int64}, {total:Int64})), 'UTC') AS started,
        {user:String}, concat('agent-', toString(number % ${AGENTS})), '{}', concat('Agent ', toString(number % ${AGENTS})),
        started, started, 1, generateUUIDv4()
      FROM numbers({sessions:UInt64})`,
    query_params: {
      user: user.id,
      user_index: user.index,
      sessions,
      span_start: SPAN_END_MS - SPAN_MS,
      span: SPAN_MS,
      total: user.events,
    },
  });
}

/** Loads the dataset into the embedded engine under DATA_DIR (this process must be its only user). */
export async function loadDataset(dataset: Dataset, say: (line: string) => void): Promise<void> {
  const config = loadConfig(process.env);
  const ch = await createClickHouse(config);
  await migrate(ch, createLogger('warn'));
  for (const user of dataset.users) {
    for (let offset = 0; offset < user.events; offset += CHUNK) {
      await insertEvents(ch, user, user.events, offset, Math.min(CHUNK, user.events - offset));
      say(`  ${user.id}: ${Math.min(offset + CHUNK, user.events).toLocaleString('en-US')} events`);
    }
    await insertSessions(ch, user);
  }
  const perOther = Math.floor(dataset.otherEvents / OTHER_USERS);
  for (let i = 0; i < OTHER_USERS; i += 1)
    await insertEvents(ch, { id: `other-${i}`, index: 100 + i }, perOther, 0, perOther);
  say(`  other users: ${(perOther * OTHER_USERS).toLocaleString('en-US')} events`);
  // Merged, as the background merges of a server that has run for a while leave its tables.
  const tables = await (
    await ch.client.query({
      query: `SELECT name FROM system.tables WHERE database = {db:String} AND engine LIKE '%MergeTree'`,
      query_params: { db: ch.database },
      format: 'JSONEachRow',
    })
  ).json<{ name: string }>();
  for (const { name } of tables) await ch.client.command({ query: `OPTIMIZE TABLE ${ch.database}.${name} FINAL` });
  await ch.client.close();
}
