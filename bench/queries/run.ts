import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../infra/local/free-port.ts';
import { callmeterEnv, callmeterNodeArgs } from '../../infra/local/process.ts';
import { loadMigrations, MIGRATIONS_DIR } from '../../services/shared/clickhouse/migrate.ts';
import {
  datasetOf,
  EVENTS_PER_SESSION,
  queriesResultFile,
  sessionIdOf,
  SPAN_END_MS,
  type BenchUser,
} from './dataset.ts';
import { cpuTimeMs } from '../support/processes.ts';
import { measureConcurrent, type Throughput } from './concurrent.ts';
import { measure, type Latency } from './measure.ts';

/**
 * npm run bench:queries — loads the dataset into the embedded ClickHouse engine (once: it is kept
 * under .local/bench and reused while its shape is the same), starts callmeter on it, and measures
 * p50 / p95 of each cost endpoint for the small and the large user, sequentially, over HTTP, with the
 * answer cache off (QUERY_CACHE_SECONDS=0), so that every request reads the engine. Then many
 * dashboards at once: summary, timeline and by-agent of the large user at 1, 8 and 32
 * concurrent clients, first with the cache off (the read connections alone) and then as `npm start`
 * runs (the cache on, so repeated reads are answered from it).
 * BENCH_QUERIES_EVENTS sets the large user's events (default 10 million; CI runs a reduced size),
 * BENCH_QUERIES_REQUESTS the sequential requests of each endpoint (default 60, 10 with BENCH_MODE=ci),
 * BENCH_QUERIES_SECONDS each concurrent load (default 10 s, 1 s with BENCH_MODE=ci), and
 * BENCH_QUERIES_DATA_DIR where the dataset is kept; CLICKHOUSE_READ_CONNECTIONS and UV_THREADPOOL_SIZE
 * are passed on to callmeter.
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const LARGE = Number(process.env.BENCH_QUERIES_EVENTS ?? 10_000_000);
const SMALL = 100_000;
const WARMUP = 5;
const REQUESTS = Number(process.env.BENCH_QUERIES_REQUESTS ?? (process.env.BENCH_MODE === 'ci' ? 10 : 60));
const CLIENTS = [1, 8, 32];
const LOAD_SECONDS = Number(process.env.BENCH_QUERIES_SECONDS ?? (process.env.BENCH_MODE === 'ci' ? 1 : 10));
const CONCURRENT = ['summary', 'timeline', 'by_agent'];
const SERVER_ENV = Object.fromEntries(
  ['CLICKHOUSE_READ_CONNECTIONS', 'UV_THREADPOOL_SIZE'].flatMap((name) =>
    process.env[name] === undefined ? [] : [[name, process.env[name]!]],
  ),
);
const say = (line: string) => process.stdout.write(`${line}\n`);

interface Level extends Throughput {
  readonly cpuMsPerRequest: number | null;
}

function run(args: string[], env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${args.join(' ')} exited with ${code}`))));
  });
}

async function ensureDataset(dataDir: string): Promise<void> {
  const marker = path.join(dataDir, 'dataset.json');
  // The data is reused only for the same dataset and the same migrations.
  const migrations = await loadMigrations(MIGRATIONS_DIR, 'bench');
  const shape = JSON.stringify({ dataset: datasetOf(LARGE, SMALL), migrations: migrations.map((m) => m.checksum) });
  if (existsSync(marker) && readFileSync(marker, 'utf8') === shape) {
    say(`dataset: reusing ${dataDir}`);
    return;
  }
  rmSync(dataDir, { recursive: true, force: true });
  mkdirSync(dataDir, { recursive: true });
  say(`dataset: loading ${LARGE.toLocaleString('en-US')} + ${SMALL.toLocaleString('en-US')} events into ${dataDir}`);
  const started = Date.now();
  await run(['bench/queries/load-main.ts', String(LARGE), String(SMALL)], { DATA_DIR: dataDir, LOG_LEVEL: 'warn' });
  writeFileSync(marker, shape);
  say(`dataset: loaded in ${((Date.now() - started) / 1000).toFixed(0)} s`);
}

async function startServer(
  dataDir: string,
  env: Record<string, string>,
): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const port = await freePort();
  const child = spawn(process.execPath, callmeterNodeArgs('services/main.ts'), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...callmeterEnv(),
      ...SERVER_ENV,
      ...env,
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i += 1) {
    // The next server opens the same folder, which the engine allows one process at a time.
    if ((await fetch(`${url}/healthz`).catch(() => null))?.status === 200)
      return { url, pid: child.pid!, stop: () => (child.kill('SIGTERM'), exited) };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('callmeter did not answer /healthz within 60 s');
}

/** CPU time the process has used (user and system, all its threads), from /proc on Linux; null elsewhere. */
function cpuMsOf(pid: number): number | null {
  try {
    return cpuTimeMs(pid);
  } catch {
    return null;
  }
}

/** Each endpoint at each number of clients, after a warm-up of the endpoint (which fills the cache, if on). */
async function measureClients(
  { url, pid }: { url: string; pid: number },
  user: BenchUser,
  mode: string,
): Promise<Map<string, readonly Level[]>> {
  const results = new Map<string, readonly Level[]>();
  for (const name of CONCURRENT) {
    const route = `${url}${endpoints(user)[name]}`;
    const headers = { 'x-user-id': user.id };
    await measure(route, headers, 0, WARMUP);
    const levels: Level[] = [];
    for (const clients of CLIENTS) {
      const cpuBefore = cpuMsOf(pid);
      const measured = await measureConcurrent(route, headers, clients, LOAD_SECONDS);
      const cpu = cpuMsOf(pid);
      // What bounds a load on a shared machine: the server's CPU time for each answer (its engine's threads included).
      const cpuMsPerRequest =
        cpu === null || cpuBefore === null || measured.requests === 0
          ? null
          : Math.round(((cpu - cpuBefore) / measured.requests) * 100) / 100;
      const level = { ...measured, cpuMsPerRequest };
      levels.push(level);
      say(
        `${name.padEnd(9)} ${mode.padEnd(8)} ${String(clients).padStart(2)} clients: ${level.requestsPerS} requests/s, p50 ${level.p50} ms, p95 ${level.p95} ms, ${cpuMsPerRequest} ms of CPU an answer`,
      );
    }
    results.set(name, levels);
  }
  return results;
}

/** The endpoints a dashboard loads, as it calls them. */
function endpoints(user: BenchUser): Record<string, string> {
  const middle = sessionIdOf(user, Math.floor(user.events / EVENTS_PER_SESSION / 2));
  const monthAgo = new Date(SPAN_END_MS - 30 * 86_400_000).toISOString().slice(0, 10);
  const end = new Date(SPAN_END_MS - 86_400_000).toISOString().slice(0, 10);
  return {
    summary: '/api/costs/summary',
    timeline: '/api/costs/timeline?period=daily',
    timeline_30d: `/api/costs/timeline?period=daily&start_date=${monthAgo}&end_date=${end}&tz=Asia/Kolkata`,
    by_agent: '/api/costs/by-agent',
    by_agent_30d: `/api/costs/by-agent?start_date=${monthAgo}&end_date=${end}&tz=Asia/Kolkata`,
    breakdown: `/api/sessions/${middle}/cost-breakdown`,
  };
}

const dataDir =
  process.env.BENCH_QUERIES_DATA_DIR === undefined
    ? path.join(ROOT, '.local', 'bench', `queries-${LARGE}`)
    : path.resolve(process.env.BENCH_QUERIES_DATA_DIR);
await ensureDataset(dataDir);
const dataset = datasetOf(LARGE, SMALL);
const [small, large] = dataset.users as [BenchUser, BenchUser];
const results = new Map<string, Latency>();
const concurrency = new Map<string, Map<string, readonly Level[]>>();
const uncached = await startServer(dataDir, { QUERY_CACHE_SECONDS: '0' });
try {
  for (const user of dataset.users) {
    for (const [name, route] of Object.entries(endpoints(user))) {
      const latency = await measure(`${uncached.url}${route}`, { 'x-user-id': user.id }, WARMUP, REQUESTS);
      results.set(`${name}_${user.label}`, latency);
      say(`${name.padEnd(13)} ${user.label.padStart(5)}: p50 ${latency.p50} ms, p95 ${latency.p95} ms`);
    }
  }
  concurrency.set('uncached', await measureClients(uncached, large, 'uncached'));
} finally {
  await uncached.stop();
}
const cached = await startServer(dataDir, {});
try {
  concurrency.set('cached', await measureClients(cached, large, 'cached'));
} finally {
  await cached.stop();
}

const metrics = [...results].flatMap(([name, latency]) => {
  const [endpoint] = name.split(/_(?=[^_]+$)/);
  const label = name.slice(endpoint!.length + 1);
  return [
    { name: `${endpoint}_p50_ms_${label}`, value: latency.p50, unit: 'ms' },
    { name: `${endpoint}_p95_ms_${label}`, value: latency.p95, unit: 'ms' },
  ];
});
for (const endpoint of Object.keys(endpoints(large))) {
  const ratio = results.get(`${endpoint}_${large.label}`)!.p95 / results.get(`${endpoint}_${small.label}`)!.p95;
  metrics.push({
    name: `${endpoint}_p95_ratio_${large.label}_to_${small.label}`,
    value: Math.round(ratio * 100) / 100,
    unit: 'x',
  });
}
for (const [mode, byEndpoint] of concurrency) {
  // The cached figures are what `npm start` serves; the uncached ones carry the mode in their names.
  const tag = mode === 'cached' ? '' : `_${mode}`;
  // A figure a load did not give (no answer within its time) is left out.
  const add = (name: string, value: number | null, unit: string) => {
    if (value !== null) metrics.push({ name: `${name}_${large.label}`, value, unit });
  };
  for (const [endpoint, levels] of byEndpoint) {
    const one = levels[0]!;
    for (const level of levels) {
      const at = `${endpoint}_${level.clients}_clients${tag}`;
      add(`${at}_requests_per_s`, level.requestsPerS, 'requests/s');
      add(`${at}_p50_ms`, level.p50, 'ms');
      add(`${at}_p95_ms`, level.p95, 'ms');
      add(`${at}_cpu_ms_per_request`, level.cpuMsPerRequest, 'ms');
      if (level.clients === 1) continue;
      add(`${at}_throughput_ratio_to_1_client`, ratioOf(level.requestsPerS, one.requestsPerS), 'x');
      add(`${at}_p95_ratio_to_1_client`, ratioOf(level.p95, one.p95), 'x');
    }
  }
}
function ratioOf(value: number | null, one: number | null): number | null {
  return value === null || one === null || one === 0 ? null : Math.round((value / one) * 100) / 100;
}

const machine = {
  cpus: os.cpus().length,
  cpu_model: os.cpus()[0]?.model ?? 'unknown',
  memory_gib: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  platform: `${os.platform()} ${os.release()}`,
};
const out = path.join(ROOT, 'bench', 'results');
mkdirSync(out, { recursive: true });
const resultFile = queriesResultFile(LARGE);
writeFileSync(
  path.join(out, resultFile),
  `${JSON.stringify({ machine, dataset: { large_events: LARGE, small_events: SMALL, other_events: dataset.otherEvents, requests_per_endpoint: REQUESTS, concurrent_load_s: LOAD_SECONDS, read_connections: Number(SERVER_ENV.CLICKHOUSE_READ_CONNECTIONS ?? 2) }, metrics }, null, 2)}\n`,
);
const table = [
  '| endpoint | p50 ' +
    small.label +
    ' | p95 ' +
    small.label +
    ' | p50 ' +
    large.label +
    ' | p95 ' +
    large.label +
    ' | p95 ratio |',
  '|---|---|---|---|---|---|',
];
for (const endpoint of Object.keys(endpoints(large))) {
  const a = results.get(`${endpoint}_${small.label}`)!;
  const b = results.get(`${endpoint}_${large.label}`)!;
  table.push(
    `| ${endpoint} | ${a.p50} ms | ${a.p95} ms | ${b.p50} ms | ${b.p95} ms | ${(b.p95 / a.p95).toFixed(2)}x |`,
  );
}
table.push(
  '',
  `${large.label} user, ${LOAD_SECONDS} s at each number of concurrent clients (autocannon); ratios to the 1-client figure of the same run:`,
  '',
  '| endpoint | cache | clients | requests/s | ratio | p50 | p95 | p95 ratio | server CPU an answer |',
  '|---|---|---|---|---|---|---|---|---|',
);
for (const [mode, byEndpoint] of concurrency) {
  for (const [endpoint, levels] of byEndpoint) {
    const one = levels[0]!;
    for (const level of levels) {
      table.push(
        `| ${endpoint} | ${mode === 'cached' ? 'on' : 'off'} | ${level.clients} | ${level.requestsPerS} | ${ratioOf(level.requestsPerS, one.requestsPerS)}x | ${level.p50 ?? '-'} ms | ${level.p95 ?? `over ${LOAD_SECONDS} s`} ms | ${ratioOf(level.p95, one.p95) ?? '-'}x | ${level.cpuMsPerRequest ?? '-'} ms |`,
      );
    }
  }
}
writeFileSync(path.join(out, resultFile.replace(/\.json$/, '.md')), `${table.join('\n')}\n`);
say(`\n${table.join('\n')}\n\nwrote bench/results/${resultFile} and its .md`);
