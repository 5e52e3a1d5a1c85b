import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { DuckDBInstance } from '@duckdb/node-api';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clickhouseUnavailable } from '../../services/shared/clickhouse/read-failure.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { refusedForData } from '../../services/shared/clickhouse/refused-rows.ts';
import { runningInserts } from '../../services/shared/clickhouse/running-inserts.ts';
import { eventKey, storedEventKeys } from '../../services/shared/clickhouse/tables/usage-events.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { parquetExport, usageExportBody } from '../../services/query/usage-export.ts';
import { startClickHouseHttp, type ClickHouseHttpProcess } from '../support/clickhouse-http-process.ts';

/**
 * The test endpoint (test/support/clickhouse-http/, test equipment) answers @clickhouse/client as a
 * ClickHouse server would, so that the scale-out test's callmeter processes run their CLICKHOUSE_URL
 * path against it: settings of one request only, query parameters in their escaped form, errors with
 * the server's code, type and status.
 */
describe('the ClickHouse HTTP test endpoint', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'callmeter-clickhouse-http-'));
  let endpoint: ClickHouseHttpProcess;
  let client: ClickHouseClient;
  const count = async (query: string) => {
    const result = await client.query({ query, format: 'JSONEachRow' });
    return (await result.json<{ n: string }>())[0]!.n;
  };

  beforeAll(async () => {
    endpoint = await startClickHouseHttp(path.join(folder, 'clickhouse'));
    client = createClient({
      url: endpoint.url,
      clickhouse_settings: { output_format_json_quote_decimals: 1, output_format_json_quote_64bit_integers: 1 },
    });
    await client.command({ query: 'CREATE DATABASE IF NOT EXISTS endpoint' });
    await client.command({
      query: `CREATE TABLE IF NOT EXISTS endpoint.rows (id UInt64, note String, cost Decimal(38, 18))
        ENGINE = MergeTree ORDER BY id SETTINGS non_replicated_deduplication_window = 1000`,
    });
  });

  afterAll(async () => {
    await client?.close();
    await endpoint?.stop();
  });

  it("looks up a round's 30,000 stored ids in parts that each fit a server's URL limit", async () => {
    const ch = { client, database: 'lookup', embedded: false, cluster: null };
    await migrate(ch, createLogger('silent'));
    const refs = Array.from({ length: 30_000 }, (_, i) => ({ user_id: `tenant-${i % 5}`, event_id: randomUUID() }));
    const stored = refs.filter((_, i) => i % 1_000 === 0);
    await client.insert({
      table: 'lookup.usage_event_ids_by_user',
      values: stored.map((ref) => ({ user_id: ref.user_id, id: ref.event_id })),
      format: 'JSONEachRow',
    });
    expect(await storedEventKeys(ch, refs)).toEqual(new Set(stored.map((ref) => eventKey(ref.user_id, ref.event_id))));
  });

  it("counts a round's inserts while the engine runs them, by their token's prefix, whether their client waits or not", async () => {
    const ch = { client, database: 'endpoint', embedded: false, cluster: null };
    await client.command({
      query: 'CREATE TABLE IF NOT EXISTS endpoint.slow (id UInt64, note String) ENGINE = MergeTree ORDER BY id',
    });
    // Four blocks of one row, each sleeping 0.5 s: an insert that runs for about two seconds.
    const slowInsert = (token: string) =>
      client.command({
        query: 'INSERT INTO endpoint.slow SELECT number, toString(sleepEachRow(0.5)) FROM numbers(4)',
        clickhouse_settings: { insert_deduplication_token: token, max_block_size: '1' },
      });
    const running = slowInsert('group:usage:round:aa11:usageEvents');
    let seen = 0;
    for (let i = 0; i < 40 && seen === 0; i += 1) {
      seen = await runningInserts(ch, ['group:usage:round:aa11:']);
      if (seen === 0) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect(seen).toBe(1);
    expect(await runningInserts(ch, ['group:usage:round:bb22:', 'group:usage:round:aa1:'])).toBe(0);
    await running;
    expect(await runningInserts(ch, ['group:usage:round:aa11:'])).toBe(0);

    // A client that goes away while its insert waits for a connection: the insert is never run.
    const busy = Array.from({ length: 4 }, (_, i) => slowInsert(`busy-${i}-${randomUUID()}`));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const abandoned = new AbortController();
    const gone = client
      .command({
        query: "INSERT INTO endpoint.slow VALUES (2000, 'abandoned')",
        abort_signal: abandoned.signal,
      })
      .catch((error: unknown) => error);
    await new Promise((resolve) => setTimeout(resolve, 100));
    abandoned.abort();
    await gone;
    await Promise.all(busy);
    expect(await count("SELECT count() AS n FROM endpoint.slow WHERE note = 'abandoned'")).toBe('0');
    expect(await count('SELECT count() AS n FROM endpoint.slow')).toBe('20');
    expect(endpoint.output()).not.toContain('client gone');
  });

  it('answers ping', async () => {
    expect(await client.ping()).toEqual({ success: true });
  });

  it('drops a repeated insert by its token, and an insert without a token inherits none', async () => {
    const insert = (id: number, token: string | null) =>
      client.insert({
        table: 'endpoint.rows',
        values: [{ id, note: 'same rows', cost: '0.0000003' }],
        format: 'JSONEachRow',
        clickhouse_settings: token === null ? {} : { insert_deduplicate: 1, insert_deduplication_token: token },
      });
    await insert(1, 'batch-a');
    await insert(1, 'batch-a');
    // Different rows without a token: with the last token left on the connection, it would be dropped.
    await insert(2, null);
    await insert(3, null);
    await insert(4, 'batch-b');
    expect(await count('SELECT count() AS n FROM endpoint.rows')).toBe('4');
    const sum = await client.query({ query: 'SELECT sum(cost) AS s FROM endpoint.rows', format: 'JSONEachRow' });
    expect(await sum.json()).toEqual([{ s: '0.0000012' }]);
  });

  it('applies a request setting to that request only', async () => {
    const threads = async (settings: Record<string, number>) => {
      const result = await client.query({
        query: "SELECT toString(getSetting('max_threads')) AS n",
        format: 'JSONEachRow',
        clickhouse_settings: settings,
      });
      return (await result.json<{ n: string }>())[0]!.n;
    };
    const before = await threads({});
    // More requests than the endpoint has connections, so that every connection saw the setting.
    expect(await Promise.all(Array.from({ length: 8 }, () => threads({ max_threads: 3 })))).toEqual(Array(8).fill('3'));
    expect(await Promise.all(Array.from({ length: 8 }, () => threads({})))).toEqual(Array(8).fill(before));
  });

  it('binds query parameters as a server does, whatever they hold', async () => {
    const text = "it's a\ttab, a \\ backslash and a\nnew line";
    const ids = Array.from({ length: 3_000 }, (_, i) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`);
    const result = await client.query({
      query:
        'SELECT {text:String} AS text, {list:Array(String)} AS list, {none:Nullable(String)} AS none, length({ids:Array(UUID)}) AS ids',
      query_params: { text, list: ["o'clock", 'b'], none: null, ids },
      format: 'JSONEachRow',
    });
    expect(await result.json()).toEqual([{ text, list: ["o'clock", 'b'], none: null, ids: '3000' }]);
  });

  it('keeps the parameters of concurrent requests apart', async () => {
    const echo = async (value: number) => {
      const result = await client.query({
        query: 'SELECT {value:UInt32} AS value FROM numbers(20000) ORDER BY number DESC LIMIT 1',
        query_params: { value },
        format: 'JSONEachRow',
      });
      return (await result.json<{ value: number }>())[0]!.value;
    };
    const values = Array.from({ length: 40 }, (_, i) => i);
    expect(await Promise.all(values.map(echo))).toEqual(values);
  });

  it('fails as a server fails: the code, type and status callmeter classifies errors by', async () => {
    const failure = async (run: () => Promise<unknown>) =>
      run().then(
        () => null,
        (error: unknown) => error,
      );
    const unknownTable = await failure(() => client.query({ query: 'SELECT 1 FROM endpoint.missing' }));
    expect(unknownTable).toMatchObject({ code: '60', type: 'UNKNOWN_TABLE' });
    const unparsable = await failure(() =>
      client.insert({ table: 'endpoint.rows', values: [{ id: 'not a number' }], format: 'JSONEachRow' }),
    );
    expect(refusedForData(unparsable)).toBe(true);
    const tooSlow = await failure(() =>
      client.query({ query: 'SELECT count() FROM numbers(1e12)', clickhouse_settings: { max_execution_time: 1 } }),
    );
    expect(tooSlow).toMatchObject({ code: '159', type: 'TIMEOUT_EXCEEDED' });
    expect(clickhouseUnavailable(tooSlow)).toBe(true);

    const raw = await fetch(`${endpoint.url}/?query=${encodeURIComponent('SELECT 1 FROM endpoint.missing')}`);
    expect(raw.status).toBe(404);
    expect(raw.headers.get('x-clickhouse-exception-code')).toBe('60');
    expect(await raw.text()).toMatch(/^Code: 60\. DB::Exception: .*\(UNKNOWN_TABLE\) \(version [\d.]+\)\n$/s);
  });

  it('streams an export over HTTP as a server answers it: a Parquet file DuckDB sums exactly, and JSON lines alike', async () => {
    const ch = { client, database: 'exports', embedded: false, cluster: null };
    await migrate(ch, createLogger('silent'));
    const at = Date.parse('2026-11-20T10:00:00Z');
    const rows = Array.from({ length: 3_000 }, (_, i) => ({
      id: randomUUID(),
      user_id: i % 3 === 0 ? 'other' : 'exporter',
      session_id: randomUUID(),
      provider: 'resemble',
      service: 'tts',
      event_type: 'tts_characters',
      quantity: String(100 + i),
      unit: 'character',
      unit_cost: '0.00004',
      cost: new Exact('0.00004').times(100 + i).toFixed(),
      cost_source: 'computed',
      occurred_at: new Date(at + i * 60_000).toISOString().replace('T', ' ').slice(0, 23),
      received_at: new Date(at + i * 60_000).toISOString().replace('T', ' ').slice(0, 23),
    }));
    await client.insert({ table: 'exports.usage_events', values: rows, format: 'JSONEachRow' });
    const mine = rows.filter((row) => row.user_id === 'exporter');
    const expected = mine.reduce((sum, row) => sum.plus(row.cost), new Exact('0'));
    const range = { start: at, end: at + 3 * 24 * 3600_000, userId: 'exporter' };

    const file = path.join(folder, 'export.parquet');
    await pipeline(await parquetExport(ch, range), createWriteStream(file));
    const duckdb = await DuckDBInstance.create(':memory:');
    const connection = await duckdb.connect();
    try {
      const reader = await connection.runAndReadAll(
        `SELECT count(*) AS n, sum(cost) AS cost, count(DISTINCT user_id) AS tenants FROM read_parquet('${file}')`,
      );
      const [n, cost, tenants] = reader.getRows()[0]!.map(String);
      expect([n, tenants]).toEqual([String(mine.length), '1']);
      expect(new Exact(cost!).eq(expected)).toBe(true);
    } finally {
      connection.closeSync();
    }

    const body = await usageExportBody(ch, range, 'jsonl');
    if (typeof body.text === 'string') throw new Error('an export is streamed');
    let text = '';
    for await (const part of body.text()) text += String(part);
    const lines = text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { cost: string; event_id: string });
    expect(lines).toHaveLength(mine.length);
    expect(lines.reduce((sum, line) => sum.plus(line.cost), new Exact('0')).eq(expected)).toBe(true);
  });
});
