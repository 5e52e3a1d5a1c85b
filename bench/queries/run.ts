import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../infra/local/free-port.ts';
import { callmeterNodeArgs } from '../../infra/local/process.ts';
import { loadMigrations, MIGRATIONS_DIR } from '../../services/shared/clickhouse/migrate.ts';
import {
  datasetOf,
  EVENTS_PER_SESSION,
  queriesResultFile,
  sessionIdOf,
  SPAN_END_MS,
  type BenchUser,
} from './dataset.ts';
import { measure, type Latency } from './measure.ts';

/**
 * npm run bench:queries — loads the dataset into the embedded ClickHouse engine (once: it is kept
 * under .local/bench and reused while its shape is the same), starts callmeter on it, and measures
 * p50 / p95 of each cost endpoint for the small and the large user, sequentially, over HTTP.
 * BENCH_QUERIES_EVENTS sets the large user's events (default 10 million; CI runs a reduced size).
 */
const ROOT = path.resolve(import.meta.dirname, '../..');
const LARGE = Number(process.env.BENCH_QUERIES_EVENTS ?? 10_000_000);
const SMALL = 100_000;
const WARMUP = 5;
const REQUESTS = Number(process.env.BENCH_QUERIES_REQUESTS ?? 60);
const say = (line: string) => process.stdout.write(`${line}\n`);

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

async function startServer(dataDir: string): Promise<{ url: string; stop: () => void }> {
  const port = await freePort();
  const child = spawn(process.execPath, callmeterNodeArgs('services/main.ts'), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 600; i += 1) {
    if ((await fetch(`${url}/healthz`).catch(() => null))?.status === 200)
      return { url, stop: () => child.kill('SIGTERM') };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGKILL');
  throw new Error('callmeter did not answer /healthz within 60 s');
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

const dataDir = path.join(ROOT, '.local', 'bench', `queries-${LARGE}`);
await ensureDataset(dataDir);
const server = await startServer(dataDir);
const dataset = datasetOf(LARGE, SMALL);
const results = new Map<string, Latency>();
try {
  for (const user of dataset.users) {
    for (const [name, route] of Object.entries(endpoints(user))) {
      const latency = await measure(`${server.url}${route}`, { 'x-user-id': user.id }, WARMUP, REQUESTS);
      results.set(`${name}_${user.label}`, latency);
      say(`${name.padEnd(13)} ${user.label.padStart(5)}: p50 ${latency.p50} ms, p95 ${latency.p95} ms`);
    }
  }
} finally {
  server.stop();
}

const [small, large] = dataset.users as [BenchUser, BenchUser];
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
  `${JSON.stringify({ machine, dataset: { large_events: LARGE, small_events: SMALL, other_events: dataset.otherEvents, requests_per_endpoint: REQUESTS }, metrics }, null, 2)}\n`,
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
writeFileSync(path.join(out, resultFile.replace(/\.json$/, '.md')), `${table.join('\n')}\n`);
say(`\n${table.join('\n')}\n\nwrote bench/results/${resultFile} and its .md`);
