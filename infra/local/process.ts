import { spawn, type ChildProcess } from 'node:child_process';
import { createWriteStream } from 'node:fs';

/**
 * Node's arguments for a callmeter process run from source, as `npm start` runs it: tsx as the
 * loader, and a 64 MiB young generation (--max-semi-space-size; V8's default is 16 MiB). Ingest
 * allocates a short-lived buffer or object for every field of every record, and with the default the
 * scavenger took a large share of its CPU (bench/results/dated-runs.md). package.json, the Dockerfile
 * and test/fuzz/schemathesis.sh give the same flag.
 */
export function callmeterNodeArgs(file: string): string[] {
  return ['--max-semi-space-size=64', '--import', 'tsx', file];
}

/**
 * The environment a callmeter process starts with, as `npm start` gives it: libuv's thread pool of 8
 * (Node's default is 4). Every running statement of the embedded engine holds one of its threads (the
 * writer's insert, the ingest reads, the read connections: 4 with the defaults), and the embedded
 * journal's synced appends run on it too; with 4 an append waited behind the engine's statements.
 * And two allocator settings that make the process give back sooner what it freed
 * (docs/performance.md#footprint): two glibc malloc arenas (glibc's default is 8 a core, and each keeps
 * what its threads freed: the worker threads copy every statement and result of the embedded engine),
 * and a dirty-page decay of 1 s for the jemalloc linked into chdb (JE_MALLOC_CONF; ClickHouse builds it
 * with 5 s, so a load's freed pages stayed resident for seconds after it).
 */
export function callmeterEnv(): Record<string, string> {
  return {
    UV_THREADPOOL_SIZE: process.env.UV_THREADPOOL_SIZE ?? '8',
    MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX ?? '2',
    JE_MALLOC_CONF: process.env.JE_MALLOC_CONF ?? 'dirty_decay_ms:1000',
  };
}

export interface Spawned {
  readonly child: ChildProcess;
  /** Resolves with the exit code once the process has exited. */
  readonly exited: Promise<number | null>;
}

/** Starts a server process with its output in a log file (tests read it when a start fails). */
export function spawnLogged(command: string, args: readonly string[], logFile: string): Spawned {
  const log = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, exited };
}

/** SIGTERM, then SIGKILL if the process is still there after graceMs. */
export async function stopProcess(spawned: Spawned, graceMs: number): Promise<void> {
  if (spawned.child.exitCode !== null || spawned.child.signalCode !== null) return;
  spawned.child.kill('SIGTERM');
  const timer = setTimeout(() => spawned.child.kill('SIGKILL'), graceMs);
  await spawned.exited;
  clearTimeout(timer);
}
