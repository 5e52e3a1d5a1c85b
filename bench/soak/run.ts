import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../../infra/local/free-port.ts';
import { startBackingServices } from '../support/backing-services.ts';
import { eventCount } from '../support/callmeter-api.ts';
import { residentMemory, ROOT, say, sleep, startServer, type Server } from '../support/processes.ts';
import { describeMachine, writeResults } from '../support/results.ts';
import { summarizeHeapSnapshot, topGrowth, totalSelfSize } from './heap-summary.ts';
import { InspectorClient, type MemoryUsage } from './inspector-client.ts';
import { trimMalloc } from './malloc-trim.ts';
import { runSoakLoad, type SoakLoadResult } from './load.ts';
import { RedisWatch } from './redis-watch.ts';
import {
  engineFigures,
  growthJson,
  soakMarkdown,
  soakMetrics,
  type EngineFigures,
  type ProcessOutcome,
} from './report.ts';
import type { MemorySample, ProcessMemory } from './memory-series.ts';

/**
 * npm run soak (not in CI) — callmeter as the bench runs it (an ingest process and a
 * consumer+query process, through the real Kafka broker and redis-server) under a steady load for
 * SOAK_MINUTES (default 30), the first SOAK_WARMUP_MINUTES (default 5) of it a warm-up. Every
 * SOAK_SAMPLE_SECONDS (5) it reads each process's resident memory; after the warm-up and at the end it
 * asks each process, over the inspector (--inspect), for a full collection, its memory after it, and a
 * heap snapshot (bench/results/soak/, not committed). It writes bench/results/soak.json and soak.md:
 * RSS growth after the warm-up (target <= 5 %), heap used after GC at both points, the embedded engine's
 * own memory figures (from the consumer+query process's /metrics), and the constructors
 * whose objects grew most between the two snapshots; and Redis's memory and keys beside them.
 * SOAK_RATE sets the usage events a second (1,000), SOAK_REDIS_MAXMEMORY Redis's bound (4gb).
 */
const MINUTES = Number(process.env.SOAK_MINUTES ?? 30);
const WARMUP_MINUTES = Number(process.env.SOAK_WARMUP_MINUTES ?? 5);
const RATE = Number(process.env.SOAK_RATE ?? 1_000);
const SAMPLE_MS = Number(process.env.SOAK_SAMPLE_SECONDS ?? 5) * 1_000;
// Above the tests' 256 MB: a Redis that grows (claims left behind, live entries) shows in the soak's
// figures (redis_used_memory_mb, the keys by family) instead of refusing writes and stopping the load.
const REDIS_MAXMEMORY = process.env.SOAK_REDIS_MAXMEMORY ?? '4gb';
if (!(WARMUP_MINUTES > 0 && MINUTES > WARMUP_MINUTES && RATE > 0 && SAMPLE_MS > 0))
  throw new Error('SOAK_MINUTES must exceed SOAK_WARMUP_MINUTES, and both, SOAK_RATE and SOAK_SAMPLE_SECONDS be > 0');
// Each RSS figure compared is the median over this window, not one sample: a sample can fall on
// either side of a garbage collection. Both windows end where a snapshot begins: the full collection of
// a snapshot shrinks V8's young generation for a while, so a window after it would start from a heap
// not at work.
// What the warm-up snapshot leaves in the allocator is returned with malloc_trim (malloc-trim.ts), so
// that it neither counts as growth at the end nor hides growth; that trim can only make the end higher.
const WINDOW_S = Math.min(60, (WARMUP_MINUTES * 60) / 2, ((MINUTES - WARMUP_MINUTES) * 60) / 4);
// The load goes on this long after the end snapshots start, so that they see the traffic the warm-up
// ones saw (requests in flight, batches being filled), not a process at rest.
const TAIL_MS = 90_000;
const USER = 'soak';
const SNAPSHOTS = path.join(ROOT, 'bench', 'results', 'soak');

/** A callmeter process, and the inspector session the soak keeps open with it from start to end. */
interface Watched {
  readonly name: string;
  readonly server: Server;
  readonly inspector: InspectorClient;
}

interface HeapPoint {
  readonly memory: MemoryUsage;
  readonly file: string;
  /** The embedded engine's gauges from /metrics just before the snapshot; empty for a process without one. */
  readonly engine: EngineFigures;
}

async function startWatched(name: string, env: Record<string, string>): Promise<Watched> {
  const inspectPort = await freePort();
  const server = await startServer('services/main.ts', env, [`--inspect=127.0.0.1:${inspectPort}`]);
  return { name, server, inspector: await InspectorClient.connect(inspectPort) };
}

async function heapPoint(watched: Watched, label: string): Promise<HeapPoint> {
  const engine = engineFigures(await (await fetch(`${watched.server.url}/metrics`)).text());
  const memory = await watched.inspector.memoryAfterGc();
  const file = path.join(SNAPSHOTS, `${watched.name}-${label}.heapsnapshot`);
  await watched.inspector.writeHeapSnapshot(file);
  return { memory, file, engine };
}

/** Resident memory from /proc, the rest from process.memoryUsage() in the process; in MiB. */
async function readMemory(watched: Watched): Promise<ProcessMemory> {
  const resident = residentMemory(watched.server.child.pid!);
  const usage = await watched.inspector.memoryUsage();
  const tenth = (mib: number) => Math.round(mib * 10) / 10;
  return {
    rss: tenth(resident.rss),
    rssAnon: tenth(resident.anon),
    rssFile: tenth(resident.file),
    heapTotal: tenth(usage.heapTotal / 2 ** 20),
    heapUsed: tenth(usage.heapUsed / 2 ** 20),
    external: tenth(usage.external / 2 ** 20),
  };
}

/** MiB of anonymous RSS that malloc_trim returned (see malloc-trim.ts); null when it could not run. */
async function trimAfterSnapshot(watched: Watched): Promise<number | null> {
  const before = residentMemory(watched.server.child.pid!).anon;
  if (!(await trimMalloc(watched.server.child.pid!))) return null;
  return Math.round(before - residentMemory(watched.server.child.pid!).anon);
}

/** Rejects as soon as the load fails or a callmeter process exits; never resolves. */
function failure(load: Promise<SoakLoadResult>, watched: readonly Watched[], stopping: () => boolean) {
  return new Promise<never>((_, reject) => {
    load.catch(reject);
    for (const w of watched)
      w.server.child.once('exit', (code, signal) => {
        if (!stopping()) reject(new Error(`${w.name} exited (${code ?? signal}) during the soak`));
      });
  });
}

async function waitForStored(url: string, expected: number, timeoutMs: number): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  let stored = await eventCount(url, USER);
  while (stored < expected && Date.now() < deadline) {
    await sleep(1_000);
    stored = await eventCount(url, USER);
  }
  return stored;
}

async function main(): Promise<void> {
  const startedAt = new Date();
  const folder = path.join(ROOT, '.local', 'bench', 'soak');
  for (const dir of [folder, SNAPSHOTS]) {
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
  }
  say('starting the Kafka broker and redis-server');
  const backing = await startBackingServices(folder, 'soak', { maxmemory: REDIS_MAXMEMORY });
  const redis = RedisWatch.connect(backing.redis.url);
  const watched: Watched[] = [];
  let stopping = false;
  let sampler: NodeJS.Timeout | undefined;
  try {
    say('starting ingest and consumer+query, each with --inspect on a loopback port');
    watched.push(
      await startWatched('ingest', { ...backing.env, SERVICES: 'ingest', DATA_DIR: path.join(folder, 'ingest') }),
    );
    watched.push(
      await startWatched('consumer_query', {
        ...backing.env,
        SERVICES: 'consumer,query',
        DATA_DIR: path.join(folder, 'consumer'),
      }),
    );
    const [ingest, consumer] = watched as [Watched, Watched];
    const loadStarted = Date.now();
    const elapsedS = () => (Date.now() - loadStarted) / 1_000;
    const samples: MemorySample[] = [];
    let sampling = false;
    sampler = setInterval(() => {
      // A reading waits while a process takes a heap snapshot: the next tick then waits for it, not beside it.
      if (sampling) return;
      sampling = true;
      const at = elapsedS();
      void Promise.all([redis.memory(), ...watched.map(async (w) => [w.name, await readMemory(w)] as const)])
        .then(([redisMemory, ...memory]) =>
          samples.push({ at, processes: Object.fromEntries(memory), redis: redisMemory, load: os.loadavg()[0]! }),
        )
        // A process that has exited answers no more: the soak fails on its exit (failure()), not here.
        .catch(() => undefined)
        .finally(() => (sampling = false));
    }, SAMPLE_MS);
    say(
      `load: ${RATE} usage events/s for ${MINUTES} minutes (warm-up ${WARMUP_MINUTES}), then ${TAIL_MS / 1000} s more`,
    );
    const load = runSoakLoad({
      ingestUrl: ingest.server.url,
      queryUrl: consumer.server.url,
      user: USER,
      rate: RATE,
      connections: 16,
      segmentMs: 60_000,
      sessionsPerSegment: 20,
      endAt: loadStarted + MINUTES * 60_000 + TAIL_MS,
    });
    const failed = failure(load, watched, () => stopping);
    failed.catch(() => undefined); // seen by the races below; after the last of them, nothing is waiting on it
    const until = (at: number) => Promise.race([sleep(at - Date.now()), failed]);

    await until(loadStarted + WARMUP_MINUTES * 60_000);
    const warmAt = elapsedS();
    say('warm-up over: heap snapshots');
    const warm = await Promise.race([Promise.all(watched.map((w) => heapPoint(w, 'warm'))), failed]);
    say('returning what the snapshots left in the allocator (malloc_trim through gdb)');
    const trimmed = await Promise.race([Promise.all(watched.map((w) => trimAfterSnapshot(w))), failed]);
    await until(loadStarted + MINUTES * 60_000);
    const endAt = elapsedS();
    say('end: heap snapshots');
    const end = await Promise.race([Promise.all(watched.map((w) => heapPoint(w, 'end'))), failed]);
    const loadResult = await Promise.race([load, failed]);
    const loadSeconds = elapsedS();
    clearInterval(sampler);
    say(`load over (${loadResult.events} events acknowledged): waiting for the consumer to store them`);
    const stored = await waitForStored(consumer.server.url, loadResult.events, 180_000);
    const redisKeyFamilies = await redis.keyFamilies();
    // A process that still has an inspector session at exit waits for it to go away: close them first.
    stopping = true;
    for (const w of watched) w.inspector.close();
    await Promise.all(watched.map((w) => w.server.stop()));

    writeFileSync(path.join(SNAPSHOTS, 'samples.json'), JSON.stringify(samples));
    say('comparing the heap snapshots');
    const processes: ProcessOutcome[] = watched.map((w, i) => {
      const before = summarizeHeapSnapshot(warm[i]!.file);
      const after = summarizeHeapSnapshot(end[i]!.file);
      return {
        name: w.name,
        warm: warm[i]!.memory,
        end: end[i]!.memory,
        snapshotWarm: totalSelfSize(before),
        snapshotEnd: totalSelfSize(after),
        trimmedAfterWarm: trimmed[i]!,
        engineWarm: warm[i]!.engine,
        engineEnd: end[i]!.engine,
        growth: topGrowth(before, after, 10),
      };
    });
    const outcome = {
      startedAt,
      warmupMinutes: WARMUP_MINUTES,
      rate: RATE,
      loadStartedAt: loadStarted,
      warmAt,
      endAt,
      loadSeconds,
      windowSeconds: WINDOW_S,
      samples,
      load: loadResult,
      stored,
      processes,
      redisKeyFamilies,
      redisMaxmemory: REDIS_MAXMEMORY,
    };
    const metrics = soakMetrics(outcome);
    const machine = describeMachine(`soak ${MINUTES} min`, startedAt.getTime());
    const markdown = soakMarkdown(outcome, metrics);
    writeResults(
      'soak',
      { machine, metrics, heap_growth: growthJson(outcome), redis_keys_at_end: redisKeyFamilies },
      markdown,
    );
    say(`\n${markdown.join('\n')}\n\nwrote bench/results/soak.json and soak.md in ${machine.duration_s} s`);
  } finally {
    stopping = true;
    clearInterval(sampler);
    for (const w of watched) w.inspector.close();
    redis.close();
    await Promise.allSettled(watched.map((w) => (w.server.child.exitCode === null ? w.server.stop() : undefined)));
    await backing.stop();
  }
}

await main();
