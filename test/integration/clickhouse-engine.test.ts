import { randomUUID } from 'node:crypto';
import { copyFile, mkdtemp, readdir, readFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createClickHouse, createReadClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { insertRows } from '../../services/shared/clickhouse/insert-rows.ts';
import { migrate, MIGRATIONS_DIR } from '../../services/shared/clickhouse/migrate.ts';
import {
  storedEventKeys as storedEventIds,
  storedEventIdsQuery,
  storedEventPlaces,
  type UsageEventRow,
} from '../../services/shared/clickhouse/tables/usage-events.ts';
import { readTogether, type Read } from '../../services/query/queries/together.ts';
import { connectInfrastructure } from '../../services/shared/infrastructure.ts';
import { Shutdown } from '../../services/shared/lifecycle.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { isolate, testConfig } from '../support/harness.ts';
import { expectSessionsCountedOnce } from '../support/rollups.ts';
import { storedSessionCounts } from '../../services/consumer/stored-totals.ts';

function makeUsageRow(overrides: Record<string, unknown> = {}) {
  return {
    id: randomUUID(),
    user_id: 'user-1',
    agent_id: 'agent-1',
    session_id: randomUUID(),
    provider: 'google',
    service: 'llm',
    event_type: 'llm_tokens',
    quantity: '1',
    unit: 'token',
    unit_cost: '0.0000003',
    cost: '0.0000003',
    cost_source: 'computed',
    occurred_at: '2026-11-22 01:00:00.000',
    received_at: '2026-11-22 01:00:00.000',
    ...overrides,
  };
}

/** A folder of the migrations older than `version` (its three digits): a database as made before it. */
async function migrationsBefore(version: string): Promise<string> {
  const older = await mkdtemp(path.join(os.tmpdir(), 'callmeter-migrations-'));
  for (const file of (await readdir(MIGRATIONS_DIR)).filter((name) => name < version))
    await copyFile(path.join(MIGRATIONS_DIR, file), path.join(older, file));
  return older;
}

describe('the ClickHouse engine behind @clickhouse/client', () => {
  const isolation = isolate('clickhouse');
  const log = createLogger('warn');
  let ch: ClickHouse;

  beforeAll(async () => {
    ch = await createClickHouse(testConfig(isolation));
  });

  afterAll(async () => {
    await ch.client.close();
  });

  it('starts the engine with the configured memory limit and caches, not the sizes of a server', async () => {
    const { embeddedMemory } = testConfig(isolation).clickhouse;
    const result = await ch.client.query({
      query: `SELECT name, value FROM system.server_settings
              WHERE name IN ('max_server_memory_usage', 'mark_cache_size', 'primary_index_cache_size')`,
      format: 'JSONEachRow',
    });
    const settings = Object.fromEntries(
      (await result.json<{ name: string; value: string }>()).map(({ name, value }) => [name, Number(value)]),
    );
    expect(settings).toEqual({
      max_server_memory_usage: embeddedMemory.limitBytes,
      mark_cache_size: embeddedMemory.cacheBytes / 2,
      primary_index_cache_size: embeddedMemory.cacheBytes / 4,
    });
  });

  it('applies every migration once and records it', async () => {
    const first = await migrate(ch, log);
    const second = await migrate(ch, log);
    expect(first).toContain(1);
    expect(second).toEqual([]);
    const result = await ch.client.query({
      query: `SELECT version FROM ${ch.database}.schema_migrations ORDER BY version`,
      format: 'JSONEachRow',
    });
    expect((await result.json<{ version: number }>()).map((row) => Number(row.version))).toEqual(first);
  });

  it('sums Decimal costs exactly and reads them back as decimal strings', async () => {
    const rows = Array.from({ length: 1000 }, () => makeUsageRow({ user_id: 'sum-user' }));
    await ch.client.insert({ table: `${ch.database}.usage_events`, values: rows, format: 'JSONEachRow' });
    const result = await ch.client.query({
      query: `SELECT sum(cost) AS total, count() AS events FROM ${ch.database}.usage_events WHERE user_id = {user_id:String}`,
      query_params: { user_id: 'sum-user' },
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ total: '0.0003', events: '1000' }]);
  });

  it("answers several reads in one statement, each read's rows as the read alone gives them", async () => {
    const reads: Record<string, Read> = {
      wide: {
        sql: `SELECT toDecimal256('123456789012345678901234567890.000000000000000001', 18) AS big, toUInt64(18446744073709551615) AS most, 'a' AS tag`,
      },
      words: {
        sql: `SELECT number AS k, concat({word:String}, toString(number)) AS w FROM numbers(3)`,
        params: { word: "it's " },
      },
      none: { sql: `SELECT 1 AS x WHERE {word:String} = ''`, params: { word: "it's " } },
    };
    const together = await readTogether<{
      wide: Record<string, string>;
      words: { k: string; w: string };
      none: { x: number };
    }>(ch, { wide: reads.wide!, words: reads.words!, none: reads.none! });
    expect(together.wide).toEqual([
      { big: '123456789012345678901234567890.000000000000000001', most: '18446744073709551615', tag: 'a' },
    ]);
    expect(together.words.sort((a, b) => Number(a.k) - Number(b.k))).toEqual([
      { k: '0', w: "it's 0" },
      { k: '1', w: "it's 1" },
      { k: '2', w: "it's 2" },
    ]);
    expect(together.none).toEqual([]);
    for (const [name, read] of Object.entries(reads)) {
      const alone = await ch.client.query({ query: read.sql, query_params: read.params, format: 'JSONEachRow' });
      const rows: object[] = together[name as keyof typeof together];
      const aloneRows = await alone.json();
      expect(aloneRows).toEqual(expect.arrayContaining(rows));
      expect(rows).toHaveLength(aloneRows.length);
    }
    await expect(
      readTogether(ch, {
        a: { sql: 'SELECT {v:String} AS v', params: { v: 'x' } },
        b: { sql: 'SELECT {v:String} AS v', params: { v: 'y' } },
      }),
    ).rejects.toThrow('query parameter v has two values in one statement');
  });

  it('stores a batch replayed with the same insert_deduplication_token once', async () => {
    const rows = [
      makeUsageRow({ user_id: 'replay-user', cost: '0.011550' }),
      makeUsageRow({ user_id: 'replay-user', cost: '0.001032' }),
    ];
    for (let attempt = 0; attempt < 3; attempt++) {
      await ch.client.insert({
        table: `${ch.database}.usage_events`,
        values: rows,
        format: 'JSONEachRow',
        clickhouse_settings: { insert_deduplication_token: 'usage-0-42-43' },
      });
    }
    const result = await ch.client.query({
      query: `SELECT sum(cost) AS total, count() AS events FROM ${ch.database}.usage_events WHERE user_id = {user_id:String}`,
      query_params: { user_id: 'replay-user' },
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ total: '0.012582', events: '2' }]);
  });

  it('keeps no insert setting past its statement: an insert without a token after one with a token is stored', async () => {
    const row = () => makeUsageRow({ user_id: 'token-reset-user' });
    await ch.client.insert({
      table: `${ch.database}.usage_events`,
      values: [row()],
      format: 'JSONEachRow',
      clickhouse_settings: { insert_deduplication_token: 'token-reset' },
    });
    for (let i = 0; i < 2; i += 1)
      await ch.client.insert({ table: `${ch.database}.usage_events`, values: [row()], format: 'JSONEachRow' });
    const result = await ch.client.query({
      query: `SELECT count() AS events FROM ${ch.database}.usage_events WHERE user_id = 'token-reset-user'`,
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ events: '3' }]);
  });

  it('finds stored event ids by a primary-key search of usage_event_ids_by_user, not a scan, and within their tenant only', async () => {
    await ch.client.command({
      query: `INSERT INTO ${ch.database}.usage_events (id, user_id, session_id, provider, service, event_type, quantity, unit, unit_cost, cost, cost_source, occurred_at, received_at)
        SELECT generateUUIDv4(number), 'lookup-user', generateUUIDv4(), 'google', 'llm', 'llm_tokens', 1, 'token', 0.0000003, 0.0000003, 'computed',
               toDateTime64('2026-10-01 00:00:00', 3, 'UTC') + number, toDateTime64('2026-10-01 00:00:00', 3, 'UTC') + number
        FROM numbers(200000)`,
    });
    const stored = await (
      await ch.client.query({
        query: `SELECT toString(id) AS stored FROM ${ch.database}.usage_events WHERE user_id = 'lookup-user' ORDER BY occurred_at LIMIT 3 OFFSET 100000`,
        format: 'JSONEachRow',
      })
    ).json<{ stored: string }>();
    const ids = [...Array.from({ length: 5 }, () => randomUUID()), ...stored.map((row) => row.stored)];
    const refs = ids.map((event_id) => ({ user_id: 'lookup-user', event_id }));
    // The same ids under another tenant are not stored: an event id deduplicates within its tenant.
    const elsewhere = stored.map((row) => ({ user_id: 'other-user', event_id: row.stored }));
    expect(await storedEventIds(ch, [...refs, ...elsewhere])).toEqual(
      new Set(stored.map((row) => `${row.stored}:lookup-user`)),
    );
    const params = { users: refs.map((ref) => ref.user_id), ids };
    const plan = await (
      await ch.client.query({
        query: `EXPLAIN indexes = 1 ${storedEventIdsQuery(ch)}`,
        query_params: params,
        format: 'TabSeparatedRaw',
      })
    ).text();
    const primary = /PrimaryKey[\s\S]*?Condition: \(\(user_id, id\) in[\s\S]*?Granules: (\d+)\/(\d+)/.exec(plan);
    expect(primary, plan).not.toBeNull();
    expect(Number(primary![1])).toBeLessThan(Number(primary![2]) / 2);
  });

  it('finds where stored events came from: every row of an id with its partition and offset, within its tenant, whatever instant each copy holds', async () => {
    const [once, twice, missing] = [randomUUID(), randomUUID(), randomUUID()];
    const at = (second: number) => `2026-11-22 02:00:0${second}.250`;
    await ch.client.insert({
      table: `${ch.database}.usage_events`,
      values: [
        makeUsageRow({ id: once, user_id: 'places-user', occurred_at: at(1), kafka_partition: 3, kafka_offset: 905 }),
        makeUsageRow({ id: twice, user_id: 'places-user', occurred_at: at(2), kafka_partition: 3, kafka_offset: 873 }),
        // A client's copy sent without a timestamp: stored at the instant it reached ingest.
        makeUsageRow({ id: twice, user_id: 'places-user', occurred_at: at(7), kafka_partition: 3, kafka_offset: 912 }),
        makeUsageRow({ id: once, user_id: 'places-other', occurred_at: at(1), kafka_partition: 0, kafka_offset: 7 }),
      ],
      format: 'JSONEachRow',
    });
    const places = await storedEventPlaces(
      ch,
      [once, twice, missing].map((event_id) => ({ user_id: 'places-user', event_id })),
    );
    const sorted = [...places].map(([key, found]) => [key, found.map((place) => place.offset).sort()]).sort();
    expect(sorted).toEqual(
      [
        [`${once}:places-user`, ['905']],
        [`${twice}:places-user`, ['873', '912']],
      ].sort(),
    );
    expect(places.get(`${once}:places-user`)).toEqual([{ partition: 3, offset: '905' }]);
  });

  it('answers reads on their own connection while a statement holds the writer, and sees its writes at once', async () => {
    const reads = await createReadClickHouse(testConfig(isolation), ch);
    try {
      expect(reads.client).not.toBe(ch.client);
      let slowDone = false;
      const slow = ch.client
        .query({ query: 'SELECT sleepEachRow(0.5) FROM numbers(4)', format: 'JSONEachRow' })
        .then(async (result) => {
          await result.json();
          slowDone = true;
        });
      const count = async () =>
        (
          await (
            await reads.client.query({
              query: `SELECT count() AS n FROM ${ch.database}.usage_events WHERE user_id = 'reads-user'`,
              format: 'JSONEachRow',
            })
          ).json<{ n: string }>()
        )[0]!.n;
      expect(await count()).toBe('0');
      expect(slowDone).toBe(false);
      await slow;
      // As the writer inserts: with a token (see insertRows on settings that outlive a statement here).
      // The columns the test sets; ClickHouse fills the others with their defaults.
      await insertRows(
        ch,
        'usageEvents',
        [makeUsageRow({ user_id: 'reads-user' }) as unknown as UsageEventRow],
        'reads-test',
      );
      expect(await count()).toBe('1');
    } finally {
      await reads.client.close();
    }
  });

  it('answers the reads of the ingest path on a connection of their own while a heavy cost query holds the reads connection', async () => {
    const shutdown = new Shutdown(log, 10_000);
    const infra = await connectInfrastructure(testConfig(isolation), log, shutdown);
    try {
      expect(
        new Set([infra.clickhouse.client, infra.clickhouseReads.client, infra.clickhouseIngestReads.client]).size,
      ).toBe(3);
      let heavyDone = false;
      const heavy = infra.clickhouseReads.client
        .query({ query: 'SELECT sleepEachRow(0.5) FROM numbers(4) SETTINGS max_block_size = 1', format: 'JSONEachRow' })
        .then(async (result) => {
          await result.json();
          heavyDone = true;
        });
      const lookup = await storedEventIds(infra.clickhouseIngestReads, [
        { user_id: 'tenant-1', event_id: randomUUID() },
      ]);
      expect([lookup.size, heavyDone]).toEqual([0, false]);
      await heavy;
    } finally {
      await shutdown.run('test');
    }
  });

  it('runs parameterized statements side by side on the read connections, each with its own values', async () => {
    const reads = await createReadClickHouse(testConfig(isolation), ch, 2);
    try {
      let slowDone = false;
      const slow = reads.client
        .query({
          query: 'SELECT sleepEachRow(0.5) FROM numbers(8) WHERE {go:UInt8} = 1 SETTINGS max_block_size = 1',
          query_params: { go: 1 },
          format: 'JSONEachRow',
        })
        .then(async (result) => {
          await result.json();
          slowDone = true;
        });
      // Values the server parses from text as the placeholder's type: quotes, backslashes, escapes,
      // control characters, "\\N", an injection attempt, non-ASCII; arrays and wide integers beside them.
      const hostile = ["o'brien", 'back\\slash', 'tab\tnew\nline\r', '\\N', "'; DROP TABLE t; --", 'ünï 🎧', '', '\\'];
      const asked = Array.from({ length: 64 }, (_, i) => ({
        text: `${hostile[i % hostile.length]}#${i}`,
        list: [hostile[(i + 1) % hostile.length]!, `${i}`],
        wide: String(2n ** 62n + BigInt(i)),
      }));
      const answered = await Promise.all(
        asked.map(async (values) => {
          const result = await reads.client.query({
            query: 'SELECT {text:String} AS text, {list:Array(String)} AS list, toString({wide:Int64}) AS wide',
            query_params: values,
            format: 'JSONEachRow',
          });
          return (await result.json<typeof values>())[0];
        }),
      );
      expect(answered).toEqual(asked);
      // Values of 800 KB (the stored-id lookups of large batches): more than the parser takes by default.
      const ids = Array.from(
        { length: 20_000 },
        (_, i) => `${randomUUID().slice(0, 24)}${String(i).padStart(12, '0')}`,
      );
      const counted = await reads.client.query({
        query: 'SELECT length({ids:Array(String)}) AS n, {ids:Array(String)}[20000] AS last',
        query_params: { ids },
        format: 'JSONEachRow',
      });
      expect(await counted.json()).toEqual([{ n: '20000', last: ids.at(-1) }]);
      expect(slowDone).toBe(false);
      await slow;
      await expect(
        reads.client.query({ query: 'SELECT {missing:String}', query_params: {}, format: 'JSONEachRow' }),
      ).rejects.toThrow('query parameter missing is not set');
    } finally {
      await reads.client.close();
    }
  });

  it('stops a read past its configured time or result size, and leaves the writer unlimited', async () => {
    const reads = await createReadClickHouse(
      testConfig(isolation, { CLICKHOUSE_READ_MAX_EXECUTION_TIME_S: '1', CLICKHOUSE_READ_MAX_RESULT_BYTES: '4096' }),
      ch,
    );
    const rows = (client: ClickHouse['client'], query: string) =>
      client.query({ query, format: 'JSONEachRow' }).then((result) => result.json());
    try {
      await expect(rows(reads.client, 'SELECT number FROM numbers(100000)')).rejects.toThrow(
        /Limit for result exceeded/,
      );
      await expect(rows(reads.client, 'SELECT count() FROM numbers(100000000000)')).rejects.toThrow(/Timeout exceeded/);
      expect(await rows(reads.client, 'SELECT 1 AS one')).toEqual([{ one: 1 }]);
      expect(await rows(ch.client, 'SELECT number FROM numbers(100000)')).toHaveLength(100000);
    } finally {
      await reads.client.close();
    }
  });

  it('backfills the cost-query rollups, the event-id table and the sessions by user once when a database made before them is upgraded, and widens the sums', async () => {
    const older = await migrationsBefore('005');
    // The engine allows one data folder per process: the upgraded database lives beside the others.
    const upgrade: ClickHouse = { ...ch, database: `${ch.database}_upgrade` };
    await migrate(upgrade, log, older);
    const session_id = randomUUID();
    const rows = Array.from({ length: 40 }, (_, i) =>
      makeUsageRow({ user_id: 'old-user', session_id, agent_id: `agent-${i % 4}`, cost: '0.0123' }),
    );
    await upgrade.client.insert({ table: `${upgrade.database}.usage_events`, values: rows, format: 'JSONEachRow' });
    const version = (status: string, n: number) => ({
      id: session_id,
      room_name: 'room',
      status,
      user_id: 'old-user',
      session_data: '{}',
      created_at: 1_700_000_000_000,
      updated_at: 1_700_000_000_000 + n,
      version: n,
      record_id: randomUUID(),
    });
    await upgrade.client.insert({
      table: `${upgrade.database}.sessions`,
      values: [version('ACTIVE', 1), version('COMPLETED', 2)],
      format: 'JSONEachRow',
    });
    const later = (await readdir(MIGRATIONS_DIR))
      .filter((name) => name >= '005' && name.endsWith('.sql'))
      .map((name) => Number(name.slice(0, 3)));
    expect(await migrate(upgrade, log)).toEqual(later);
    await migrate(upgrade, log);
    const sums = async (table: string) =>
      (
        await (
          await upgrade.client.query({
            query: `SELECT toString(sum(cost)) AS cost, toString(sum(events)) AS events FROM ${upgrade.database}.${table}`,
            format: 'JSONEachRow',
          })
        ).json()
      )[0];
    for (const table of ['usage_totals_15m', 'usage_by_agent_daily', 'usage_by_session'])
      expect(await sums(table), table).toEqual({ cost: '0.492', events: '40' });
    const ids = await (
      await upgrade.client.query({
        query: `SELECT count() AS ids, uniqExact(user_id, id) AS distinct_ids FROM ${upgrade.database}.usage_event_ids_by_user FINAL`,
        format: 'JSONEachRow',
      })
    ).json();
    expect(ids).toEqual([{ ids: '40', distinct_ids: '40' }]);
    // 010 widened the rollups' sums and dropped the event-id table of 006, which ordered ids without their tenant.
    const types = await (
      await upgrade.client.query({
        query: `SELECT table, type FROM system.columns WHERE database = {db:String} AND name = 'cost' AND table IN ('usage_totals_daily', 'usage_by_session') ORDER BY table`,
        query_params: { db: upgrade.database },
        format: 'JSONEachRow',
      })
    ).json();
    expect(types).toEqual([
      { table: 'usage_by_session', type: 'SimpleAggregateFunction(sum, Decimal(76, 18))' },
      { table: 'usage_totals_daily', type: 'Decimal(76, 18)' },
    ]);
    const old = await (
      await upgrade.client.query({
        query: `SELECT count() AS n FROM system.tables WHERE database = {db:String} AND name LIKE 'usage_event_ids%' AND name NOT LIKE '%by_user%'`,
        query_params: { db: upgrade.database },
        format: 'JSONEachRow',
      })
    ).json();
    expect(old).toEqual([{ n: '0' }]);
    const byUser = await (
      await upgrade.client.query({
        query: `SELECT toString(id) AS id, argMax(status, version) AS status FROM ${upgrade.database}.sessions_by_user WHERE user_id = 'old-user' GROUP BY id`,
        format: 'JSONEachRow',
      })
    ).json();
    expect(byUser).toEqual([{ id: session_id, status: 'COMPLETED' }]);
    await expectSessionsCountedOnce(upgrade, 1);
  });

  it('marks the first stored row of every session when a database made before session_first is upgraded, and counts each once', async () => {
    const older = await migrationsBefore('021');
    const upgrade: ClickHouse = { ...ch, database: `${ch.database}_sessions` };
    await migrate(upgrade, log, older);
    const [long, short, other] = [randomUUID(), randomUUID(), randomUUID()];
    const at = (minute: number) => `2026-11-22 01:${String(minute).padStart(2, '0')}:00.000`;
    // The long call's usage came in two inserts: the earlier stored one holds its first row, whenever it happened.
    const first = [makeUsageRow({ user_id: 'old-user', session_id: long, occurred_at: at(30) })];
    const later = [
      makeUsageRow({ user_id: 'old-user', session_id: long, occurred_at: at(10) }),
      makeUsageRow({ user_id: 'old-user', session_id: short, occurred_at: at(20) }),
      makeUsageRow({ user_id: 'old-user', session_id: short, occurred_at: at(5) }),
      makeUsageRow({ user_id: 'other-user', session_id: other, occurred_at: at(1) }),
      makeUsageRow({ user_id: 'old-user', session_id: long, agent_id: 'agent-2', occurred_at: at(40) }),
    ];
    const table = `${upgrade.database}.usage_events`;
    await upgrade.client.insert({ table, values: first, format: 'JSONEachRow' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    await upgrade.client.insert({ table, values: later, format: 'JSONEachRow' });
    expect(await migrate(upgrade, log)).toEqual([21]);
    expect(await migrate(upgrade, log)).toEqual([]);
    const marked = async (column: string) =>
      (
        await (
          await upgrade.client.query({
            query: `SELECT toString(id) AS id FROM ${table} WHERE ${column} = 1 ORDER BY id`,
            format: 'JSONEachRow',
          })
        ).json<{ id: string }>()
      ).map(({ id }) => id);
    expect(await marked('session_first')).toEqual([first[0]!.id, later[2]!.id, later[3]!.id].sort());
    // The long call under its second agent too.
    expect(await marked('agent_session_first')).toEqual(
      [first[0]!.id, later[2]!.id, later[3]!.id, later[4]!.id].sort(),
    );
    await expectSessionsCountedOnce(upgrade, 3);
    expect((await storedSessionCounts(upgrade)).agent_sessions).toBe(4);
    await expectSessionsCountedOnce(upgrade, 2, 'old-user');
  });

  it('runs every query of the SQL guide for finance (docs/finance-sql.md)', async () => {
    const guide = await readFile(new URL('../../docs/finance-sql.md', import.meta.url), 'utf8');
    const block = /## Queries[\s\S]*?```sql\n([\s\S]*?)```/.exec(guide)?.[1] ?? '';
    const statements = block
      .split(/;\s*\n/)
      .map((s) => s.replace(/^--.*$/gm, '').trim())
      .filter((s) => s !== '');
    expect(statements.length).toBeGreaterThanOrEqual(5);
    for (const statement of statements) {
      // Finance connects to the database; the embedded engine needs it named in the statement.
      const query = statement
        .replace(
          /\b(FROM)\s+(usage_events|usage_rollup_15m|sessions_current|telephony_numbers|usage_events_dlq|dead_letters)\b/g,
          `$1 ${ch.database}.$2`,
        )
        .replace("'…'", `'${randomUUID()}'`);
      await expect(ch.client.query({ query, format: 'JSONEachRow' }).then((r) => r.json())).resolves.toBeInstanceOf(
        Array,
      );
    }
  });
});
