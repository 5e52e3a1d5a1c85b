import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportDays } from '../../services/query/scheduled-export.ts';
import { createReadClickHouse, createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { loadConfig } from '../../services/shared/config.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate } from '../support/harness.ts';

const DAY_MS = 24 * 3600 * 1000;
const TENANTS = ['export-a', 'export-b'] as const;

/** Usage of every kind for one tenant's call, at instants of `day` (yesterday or the day before, UTC). */
function usageOf(sessionId: string, user: string, day: number, n: number) {
  const at = (minute: number) => new Date(day + (9 * 60 + minute) * 60_000).toISOString();
  return [
    {
      provider: 'deepgram',
      event_type: 'stt_minutes',
      usage_data: { audio_duration_seconds: 210 + n },
      timestamp: at(1),
    },
    {
      provider: 'google',
      event_type: 'llm_tokens',
      model: 'gemini-2.0-flash',
      usage_data: { input_tokens: 900 + n, output_tokens: 300 },
      timestamp: at(2),
    },
    {
      provider: 'gemini',
      event_type: 'llm_tokens',
      quantity: 1200,
      unit_cost: 0.00086,
      total_cost: 0.001032,
      timestamp: at(3),
    },
    { provider: 'resemble', event_type: 'tts_characters', usage_data: { character_count: 510 + n }, timestamp: at(4) },
    { provider: 'speechmatics-x', event_type: 'stt_minutes', quantity: 2, timestamp: at(5) },
  ].map((event) => ({ session_id: sessionId, user_id: user, ...event }));
}

/** One row of a DuckDB answer, every value as text (DECIMAL sums exact). */
async function duck(connection: DuckDBConnection, sql: string): Promise<Record<string, string>[]> {
  const reader = await connection.runAndReadAll(sql);
  return reader.getRowObjects().map((row) => Object.fromEntries(Object.entries(row).map(([k, v]) => [k, String(v)])));
}

describe('exports a warehouse reads: Parquet, CSV and JSON lines of the priced events, and day files', () => {
  const isolation = isolate('export');
  let app: CallmeterProcess;
  let duckdb: DuckDBInstance;
  let db: DuckDBConnection;
  const today = Date.now() - (Date.now() % DAY_MS);
  const days = [today - 2 * DAY_MS, today - DAY_MS];
  const range = `from=${new Date(days[0]!).toISOString().slice(0, 10)}&to=${new Date(days[1]!).toISOString().slice(0, 10)}`;
  const summaries = new Map<string, { total_cost: string; event_count: number }>();
  const lake = path.join(isolation.dataDir, 'lake');

  beforeAll(async () => {
    app = await startCallmeter({ DATA_DIR: isolation.dataDir, EXPORT_DIR: lake, EXPORT_INTERVAL_SECONDS: '10' });
    for (const user of TENANTS) {
      for (const [n, day] of days.entries()) {
        const session = await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
          room_name: `room-${user}-${n}`,
          user_id: user,
          agent_id: `agent-${n}`,
        });
        expect(session.status).toBe(201);
        const answer = await call<{ status: string }[]>(
          app.url,
          'POST',
          '/api/usage/events/batch',
          usageOf(session.body.id, user, day, n),
        );
        expect(answer.body.map((item) => item.status)).toEqual(Array(5).fill('accepted'));
      }
      const summary = await call<{ total_cost: string; event_count: number }>(
        app.url,
        'GET',
        '/api/costs/summary',
        undefined,
        { 'x-user-id': user },
      );
      expect(summary.body.event_count).toBe(10);
      summaries.set(user, summary.body);
    }
    duckdb = await DuckDBInstance.create(':memory:');
    db = await duckdb.connect();
  }, 120_000);

  afterAll(async () => {
    db?.closeSync();
    await app?.stop();
  });

  const download = async (query: string, headers: Record<string, string> = {}) => {
    const response = await fetch(`${app.url}/api/export/usage?${query}`, { headers });
    return { response, bytes: Buffer.from(await response.arrayBuffer()) };
  };

  it('answers a tenant’s events as Parquet whose exact sums DuckDB reads equal to its summary', async () => {
    const { response, bytes } = await download(`${range}&format=parquet`, { 'x-user-id': 'export-a' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('application/vnd.apache.parquet');
    expect(response.headers.get('content-disposition')).toContain('.parquet');
    const file = path.join(isolation.dataDir, 'a.parquet');
    writeFileSync(file, bytes);
    const [totals] = await duck(
      db,
      `SELECT count(*) AS events, sum(cost) AS cost, count(DISTINCT user_id) AS tenants FROM read_parquet('${file}')`,
    );
    expect(totals!.events).toBe('10');
    expect(totals!.tenants).toBe('1');
    expect(new Exact(totals!.cost!).eq(new Exact(summaries.get('export-a')!.total_cost))).toBe(true);
    // Each month's rows sum to that month's statement, to the last decimal.
    const months = await duck(
      db,
      `SELECT strftime(occurred_at, '%Y-%m') AS month, sum(cost) AS cost FROM read_parquet('${file}') GROUP BY month`,
    );
    for (const { month, cost } of months) {
      const statement = await call<{ total_cost: string }>(app.url, 'GET', `/api/statements/export-a/${month}`);
      expect([month, new Exact(cost!).toFixed()]).toEqual([month, new Exact(statement.body.total_cost).toFixed()]);
    }
    const types = Object.fromEntries(
      (await duck(db, `DESCRIBE SELECT * FROM read_parquet('${file}')`)).map((row) => [
        row.column_name,
        row.column_type,
      ]),
    );
    expect(types).toMatchObject({ cost: 'DECIMAL(38,18)', quantity: 'DECIMAL(38,18)', unit_cost: 'DECIMAL(38,18)' });
    expect(Object.keys(types)).toEqual(
      expect.arrayContaining([
        'event_id',
        'user_id',
        'session_id',
        'agent_id',
        'provider',
        'model',
        'event_type',
        'quantity',
        'cost',
        'cost_source',
        'occurred_at',
        'cost_components',
      ]),
    );
    // The unpriced provider is exported at 0, marked unpriced; an LLM event carries its priced parts.
    const [unpriced] = await duck(
      db,
      `SELECT count(*) AS n, sum(cost) AS cost FROM read_parquet('${file}') WHERE cost_source = 'unpriced'`,
    );
    expect(unpriced).toMatchObject({ n: '2' });
    expect(new Exact(unpriced!.cost!).eq(new Exact('0'))).toBe(true);
    const [parts] = await duck(
      db,
      `SELECT sum(len(cost_components)) AS parts FROM read_parquet('${file}') WHERE provider = 'google'`,
    );
    expect(Number(parts!.parts)).toBeGreaterThanOrEqual(4);
  });

  it('answers every tenant’s events to an admin that names none, and one tenant’s when user_id names it', async () => {
    const everyone = await download(range);
    const file = path.join(isolation.dataDir, 'all.parquet');
    writeFileSync(file, everyone.bytes);
    const rows = await duck(
      db,
      `SELECT user_id, count(*) AS events, sum(cost) AS cost FROM read_parquet('${file}') GROUP BY user_id ORDER BY user_id`,
    );
    expect(rows.map((row) => [row.user_id, row.events])).toEqual(TENANTS.map((user) => [user, '10']));
    for (const row of rows)
      expect(new Exact(row.cost!).eq(new Exact(summaries.get(row.user_id!)!.total_cost))).toBe(true);
    const named = await download(`${range}&format=jsonl&user_id=export-b`);
    const lines = named.bytes
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { user_id: string });
    expect(new Set(lines.map((line) => line.user_id))).toEqual(new Set(['export-b']));
  });

  it('answers CSV and JSON lines with decimal strings that sum to the summary, and the same events as the Parquet file', async () => {
    const jsonl = await download(`${range}&format=jsonl`, { 'x-user-id': 'export-b' });
    expect(jsonl.response.headers.get('content-type')).toBe('application/x-ndjson; charset=utf-8');
    const events = jsonl.bytes
      .toString('utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(events).toHaveLength(10);
    expect(events.every((event) => typeof event.cost === 'string' && typeof event.quantity === 'string')).toBe(true);
    expect(events[0]).toMatchObject({
      user_id: 'export-b',
      occurred_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT.*Z$/),
    });
    const sum = events.reduce((total, event) => total.plus(String(event.cost)), new Exact('0'));
    expect(sum.eq(new Exact(summaries.get('export-b')!.total_cost))).toBe(true);

    const csv = await download(`${range}&format=csv`, { 'x-user-id': 'export-b' });
    expect(csv.response.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const file = path.join(isolation.dataDir, 'b.csv');
    writeFileSync(file, csv.bytes);
    const [totals] = await duck(
      db,
      `SELECT count(*) AS events, sum(CAST(cost AS DECIMAL(38,18))) AS cost, count(DISTINCT event_id) AS ids
       FROM read_csv('${file}', header = true, all_varchar = true)`,
    );
    expect(totals).toMatchObject({ events: '10', ids: '10' });
    expect(new Exact(totals!.cost!).eq(sum)).toBe(true);
  });

  it('refuses a range past a month, one that ends before it starts, and a missing or empty bound with a 422 naming it', async () => {
    const long = await call(app.url, 'GET', '/api/export/usage?from=2026-01-01&to=2026-03-01', undefined, {
      'x-user-id': 'export-a',
    });
    expect(long.status).toBe(422);
    expect(JSON.stringify(long.body)).toContain('at most 31 days');
    const backwards = await call(app.url, 'GET', '/api/export/usage?from=2026-03-01&to=2026-02-01');
    expect(backwards.status).toBe(422);
    expect(JSON.stringify(backwards.body)).toContain('to is before from');
    const missing = await call<{ detail: { loc: string[] }[] }>(app.url, 'GET', '/api/export/usage?from=2026-03-01');
    expect(missing.status).toBe(422);
    expect(missing.body.detail.map((item) => item.loc)).toEqual([['query', 'to']]);
    // Empty values read as absent, as the cost queries read them: still required here.
    const empty = await call<{ detail: { loc: string[] }[] }>(
      app.url,
      'GET',
      '/api/export/usage?from=&to=&format=parquet&user_id=0',
    );
    expect(empty.status).toBe(422);
    expect(empty.body.detail.map((item) => item.loc)).toEqual([
      ['query', 'from'],
      ['query', 'to'],
    ]);
  });

  it('writes one Parquet file per day in Hive-style folders, rewritten the same on a second pass, whose sums equal the summaries', async () => {
    // The process's own pass (EXPORT_DIR, every 10 s) writes the two days; then, stopped, a pass is run here.
    const written = days.map((day) =>
      path.join(lake, 'table=usage_events', `dt=${new Date(day).toISOString().slice(0, 10)}`),
    );
    await eventually(
      async () => {
        for (const folder of written) expect(readdirSync(folder)).toEqual(['part-0.parquet']);
      },
      30_000,
      500,
    );
    await app.stop();
    const config = loadConfig({ DATA_DIR: isolation.dataDir });
    const writes: ClickHouse = await createClickHouse(config);
    const reads = await createReadClickHouse(config, writes);
    try {
      const dir = path.join(isolation.dataDir, 'lake-again');
      const first = await exportDays(reads, { dir, lookbackDays: 3 });
      expect(first).toEqual(days.map((day) => new Date(day).toISOString().slice(0, 10)));
      const files = () =>
        readdirSync(path.join(dir, 'table=usage_events'))
          .sort()
          .map((folder) => path.join(dir, 'table=usage_events', folder, 'part-0.parquet'));
      expect(files().map((file) => path.basename(path.dirname(file)))).toEqual(first.map((day) => `dt=${day}`));
      const before = files().map((file) => readFileSync(file));
      // Within the lookback every day is written again, to the same bytes; nothing else appears.
      expect(await exportDays(reads, { dir, lookbackDays: 3 })).toEqual(first);
      expect(files().map((file) => readFileSync(file))).toEqual(before);
      // Past the lookback a written day is left as it is.
      const mtime = statSync(files()[0]!).mtimeMs;
      expect(await exportDays(reads, { dir, lookbackDays: 1 })).toEqual([first[1]]);
      expect(statSync(files()[0]!).mtimeMs).toBe(mtime);
      const rows = await duck(
        db,
        `SELECT dt, user_id, count(*) AS events, sum(cost) AS cost
         FROM read_parquet('${dir}/table=usage_events/*/*.parquet', hive_partitioning = true)
         GROUP BY dt, user_id ORDER BY dt, user_id`,
      );
      expect(rows.map((row) => [row.dt, row.user_id, row.events])).toEqual(
        first.flatMap((day) => TENANTS.map((user) => [day, user, '5'])),
      );
      for (const user of TENANTS) {
        const total = rows
          .filter((row) => row.user_id === user)
          .reduce((sum, row) => sum.plus(row.cost!), new Exact('0'));
        expect(total.eq(new Exact(summaries.get(user)!.total_cost))).toBe(true);
      }
    } finally {
      await reads.client.close();
      await writes.client.close();
    }
  }, 90_000);
});
