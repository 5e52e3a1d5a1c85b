import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createSessions } from '../support/callmeter-api.ts';
import { drive, residentMemory, say, sleep, startServer } from '../support/processes.ts';
import type { Metric } from '../support/results.ts';

/**
 * The embedded process's memory (docs/performance.md#footprint): a fresh `npm start` left idle after its
 * start, then right after 64 connections posted single usage events, as the embedded load of the bench
 * does. Each figure is split into its anonymous part (heaps, stacks) and V8's heap, the rest of the RSS
 * being mapped files (chdb's library above all); the peak is the highest RSS sampled during the load.
 */
export interface FootprintOptions {
  readonly dataDir: string;
  /** How long the process idles after it answers /healthz before the idle figure. */
  readonly idleMs: number;
  /** How long the 64 connections post. */
  readonly loadMs: number;
}

/** One reading of the process, in MiB, and its thread count. */
export interface FootprintSnapshot {
  readonly rss: number;
  readonly anon: number;
  readonly heap: number;
  readonly threads: number;
}

const CONNECTIONS = 64;
const SESSIONS = 50;
const USER = 'bench-footprint';
const SAMPLE_MS = 500;

export async function footprint(options: FootprintOptions): Promise<Metric[]> {
  const server = await startServer('services/main.ts', { DATA_DIR: options.dataDir });
  try {
    const pid = server.child.pid!;
    say(`footprint: the embedded process idle for ${options.idleMs / 1000} s after its start`);
    await sleep(options.idleMs);
    const idle = await snapshot(server.url, pid);
    const sessions = await createSessions(server.url, USER, SESSIONS);
    say(`footprint: ${CONNECTIONS} connections posting usage for ${options.loadMs / 1000} s`);
    let peak = idle.rss;
    const sampler = setInterval(() => (peak = Math.max(peak, residentMemory(pid).rss)), SAMPLE_MS);
    const load = await drive({
      url: server.url,
      mode: 'single',
      durationMs: options.loadMs,
      connections: CONNECTIONS,
      sessions,
    }).finally(() => clearInterval(sampler));
    const loaded = await snapshot(server.url, pid);
    const mb = (value: number) => `${Math.round(value)} MiB`;
    say(`footprint: idle ${mb(idle.rss)}; after ${load.events} events ${mb(loaded.rss)}, peak ${mb(peak)}`);
    return footprintMetrics(idle, loaded, Math.max(peak, loaded.rss));
  } finally {
    await server.stop();
  }
}

/** The figures of one run; the targets are the issue's: 300 MiB idle, 500 MiB under the load. */
export function footprintMetrics(idle: FootprintSnapshot, loaded: FootprintSnapshot, peakMb: number): Metric[] {
  const phase = (name: string, at: FootprintSnapshot, target: string): Metric[] => [
    { name: `embedded_rss_${name}_mb`, value: Math.round(at.rss), unit: 'MiB', target },
    { name: `embedded_rss_${name}_anon_mb`, value: Math.round(at.anon), unit: 'MiB' },
    { name: `embedded_rss_${name}_heap_mb`, value: Math.round(at.heap), unit: 'MiB' },
    { name: `embedded_threads_${name}`, value: at.threads, unit: 'threads' },
  ];
  return [
    ...phase('idle', idle, '<= 300'),
    ...phase('c64', loaded, '<= 500'),
    { name: 'embedded_rss_c64_peak_mb', value: Math.round(peakMb), unit: 'MiB' },
  ];
}

/** V8's heap as the process's own /metrics reports it (the total it holds, used or not). */
export function heapTotalMb(metricsText: string): number {
  const bytes = /^nodejs_heap_size_total_bytes (\d+)/m.exec(metricsText)?.[1];
  if (bytes === undefined) throw new Error('no nodejs_heap_size_total_bytes in /metrics');
  return Number(bytes) / 1_048_576;
}

async function snapshot(url: string, pid: number): Promise<FootprintSnapshot> {
  const heap = heapTotalMb(await (await fetch(`${url}/metrics`)).text());
  const { rss, anon } = residentMemory(pid);
  return { rss, anon, heap, threads: readdirSync(`/proc/${pid}/task`).length };
}

// Alone: `npx tsx bench/load/footprint.ts [idle seconds] [load seconds]`, the metrics as one JSON line.
if (process.argv[1] === import.meta.filename) {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'callmeter-footprint-'));
  try {
    const [idleS = 20, loadS = 20] = process.argv.slice(2).map(Number);
    const metrics = await footprint({ dataDir: path.join(folder, 'data'), idleMs: idleS * 1000, loadMs: loadS * 1000 });
    process.stdout.write(`${JSON.stringify(metrics)}\n`);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}
