import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { budgetAlerts } from './load/budget-alerts.ts';
import { footprint } from './load/footprint.ts';
import { noisyNeighbour } from './load/noisy-neighbour.ts';
import { writerCpu } from './load/writer-cpu.ts';
import { embeddedPhase } from './phases/embedded.ts';
import { CLIENTS } from './phases/kafka-ingest.ts';
import { kafkaPath } from './phases/kafka-path.ts';
import { pricingRound } from './phases/pricing.ts';
import { queriesRound } from './phases/queries.ts';
import { redisMemory } from './phases/redis-memory.ts';
import { benchSettings } from './settings.ts';
import { drive, ROOT, say, startServer } from './support/processes.ts';
import { describeMachine, steadyTable, writeResults, type SteadyMetric } from './support/results.ts';
import { combineRounds, inRounds } from './support/rounds.ts';

/**
 * npm run bench — one command, one machine: every figure beside a baseline measured in the same round
 * (this machine is shared and noisy, so ratios are what compare across runs), each repeated phase in
 * BENCH_RUNS rounds (3; 1 in CI) interleaved with its baseline, and reported as the median of its
 * rounds with their range (bench/support/rounds.ts). Load comes from separate processes on loopback.
 * BENCH_MODE=ci runs a reduced version (shorter load and soak, a 300-thousand-event query dataset) that
 * checks the whole path in CI. BENCH_PHASE=noisy-neighbour, budgets, footprint, writer-cpu or redis-memory runs that
 * phase alone (bench/results/<phase>*.json), as its work is tried.
 */
const settings = benchSettings(process.env);
const roundFolder = (folder: string, index: number) => path.join(folder, `round-${index + 1}`);

/** Phases that can run alone (BENCH_PHASE), each in a folder of its own; the full run runs them too. */
const PHASES_ALONE: Record<string, ((folder: string) => Promise<SteadyMetric[]>) | undefined> = {
  'noisy-neighbour': (folder) =>
    inRounds(settings.runs, (index) => noisyNeighbour(settings.noisyNeighbour(roundFolder(folder, index)))),
  budgets: (folder) => inRounds(settings.runs, (index) => budgetAlerts(settings.budgets(roundFolder(folder, index)))),
  footprint: (folder) =>
    inRounds(settings.runs, (index) =>
      footprint({ dataDir: roundFolder(folder, index), idleMs: settings.footprintIdleMs, loadMs: settings.loadMs }),
    ),
  'writer-cpu': (folder) =>
    inRounds(settings.runs, (index) => writerCpu(settings.writerCpu(roundFolder(folder, index)))),
  // Once: its length is the consumer's drain of 10 million events.
  'redis-memory': async (folder) =>
    combineRounds([await redisMemory(path.join(folder, 'redis-memory'), settings.redisEvents)]),
};

async function main(): Promise<void> {
  const started = Date.now();
  const mode = settings.ci ? 'ci' : 'full';
  const alone = PHASES_ALONE[settings.phase];
  if (alone !== undefined) {
    // Its own folder, so that trying a phase leaves a full run's data alone.
    const own = mkdtempSync(path.join(os.tmpdir(), `callmeter-bench-${settings.phase}-`));
    try {
      const metrics = await alone(own);
      report(settings.ci ? `${settings.phase}-ci` : settings.phase, `${mode} ${settings.phase}`, started, metrics);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
    return;
  }
  if (settings.phase !== 'all')
    throw new Error(
      `BENCH_PHASE=${settings.phase}: the phases are all (the default), ${Object.keys(PHASES_ALONE).join(', ')}`,
    );
  const folder = path.join(ROOT, '.local', 'bench', 'run');
  rmSync(folder, { recursive: true, force: true });
  mkdirSync(folder, { recursive: true });
  report(settings.ci ? 'ci' : 'latest', mode, started, await fullRun(folder));
}

async function fullRun(folder: string): Promise<SteadyMetric[]> {
  const metrics: SteadyMetric[] = [];
  say('baseline: a bare Koa route, kept running beside the loads it is the baseline of');
  const bare = await startServer('bench/load/bare-server.ts', {});
  try {
    const sessions = [{ id: 'x', user_id: 'x' }];
    await drive({ url: bare.url, mode: 'bare', durationMs: settings.warmupMs, connections: CLIENTS, sessions });
    metrics.push(...(await kafkaPath(folder, settings, bare)));
    metrics.push(...(await embeddedPhase(folder, settings, bare)));
  } finally {
    await bare.stop();
  }
  say('footprint: the embedded process idle after its start, and after 64 connections posted usage');
  metrics.push(...(await PHASES_ALONE.footprint!(path.join(folder, 'footprint'))));
  say("writer cpu: the embedded process's CPU under a write-only load, rounds gathered and not");
  metrics.push(...(await PHASES_ALONE['writer-cpu']!(path.join(folder, 'writer-cpu'))));
  say('noisy neighbour: a steady tenant beside one holding the most of every allowance');
  metrics.push(...(await PHASES_ALONE['noisy-neighbour']!(path.join(folder, 'noisy-neighbour'))));
  say('budgets: storing beside a tenant holding its most budgets, and the alert latency');
  metrics.push(...(await PHASES_ALONE.budgets!(path.join(folder, 'budgets'))));
  if (!settings.ci) metrics.push(...(await PHASES_ALONE['redis-memory']!(folder)));
  metrics.push(...(await inRounds(settings.runs, () => pricingRound(settings.pricing))));
  metrics.push(...(await inRounds(settings.runs, () => queriesRound(settings.queryEvents))));
  return metrics;
}

/** Writes the results files (and, but in CI, the run's dated copy) and prints the table. */
function report(file: string, mode: string, started: number, metrics: readonly SteadyMetric[]): void {
  const machine = describeMachine(mode, started, { runs: settings.runs });
  const markdown = [
    `${mode} run, started ${machine.started_at.slice(0, 16).replace('T', ' ')} UTC, ${machine.duration_s} s; ` +
      `${settings.runs} round(s) of each repeated phase, figures with runs 1 measured once; ` +
      `${machine.cpus} × ${machine.cpu_model}, Node ${machine.node}.`,
    '',
    ...steadyTable(metrics),
  ];
  const dated = settings.ci
    ? undefined
    : { startedAt: started, ...(settings.phase === 'all' ? {} : { suffix: settings.phase }) };
  const written = writeResults(file, { machine, metrics }, markdown, dated);
  say(`\n${markdown.join('\n')}\n\nwrote ${written.map((base) => `${base}.json and .md`).join(', ')}`);
}

await main();
