import path from 'node:path';
import { loadConfig } from '../services/shared/config.ts';
import type { BudgetAlertOptions } from './load/budget-alerts.ts';
import type { NoisyNeighbourOptions } from './load/noisy-neighbour.ts';
import type { WriterCpuOptions } from './load/writer-cpu.ts';

/**
 * What `npm run bench` measures and for how long, read once from its environment: BENCH_MODE=ci (a
 * reduced run that checks the whole path in CI), BENCH_PHASE (one phase alone), BENCH_RUNS (rounds of
 * each repeated phase: 3 in the full run, 1 in CI so that `npm test` does not grow),
 * BENCH_REDIS_EVENTS (the Redis memory phase's events).
 */
export interface BenchSettings {
  readonly ci: boolean;
  readonly phase: string;
  readonly runs: number;
  readonly loadMs: number;
  /**
   * Unmeasured load before the first measured one of a process: the broker's JVM and every fresh Node
   * process compile their hot paths in the first seconds (back-to-back loads of one setup grew faster as
   * the broker warmed), and a broker in production has long been warm.
   */
  readonly warmupMs: number;
  readonly soakMs: number;
  /** How long a fresh embedded process idles after its start before its idle footprint is read. */
  readonly footprintIdleMs: number;
  readonly probes: number;
  readonly queryEvents: number;
  /** Not in CI: 10 million take about 10 minutes on a quiet machine. */
  readonly redisEvents: number;
  readonly pricing: { readonly rounds: number; readonly perRound: number };
  noisyNeighbour(folder: string): NoisyNeighbourOptions;
  writerCpu(folder: string): WriterCpuOptions;
  budgets(folder: string): BudgetAlertOptions;
}

export function benchSettings(env: Readonly<Record<string, string | undefined>>): BenchSettings {
  const ci = env.BENCH_MODE === 'ci';
  const runs = Number(env.BENCH_RUNS ?? (ci ? 1 : 3));
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`BENCH_RUNS=${env.BENCH_RUNS}: a whole number, 1 or more`);
  const caps = loadConfig({});
  return {
    ci,
    phase: env.BENCH_PHASE ?? 'all',
    runs,
    loadMs: ci ? 3_000 : 20_000,
    warmupMs: ci ? 1_000 : 10_000,
    soakMs: ci ? 8_000 : 300_000,
    footprintIdleMs: ci ? 3_000 : 20_000,
    probes: ci ? 20 : 200,
    queryEvents: ci ? 300_000 : 10_000_000,
    redisEvents: Number(env.BENCH_REDIS_EVENTS ?? 10_000_000),
    pricing: ci ? { rounds: 9, perRound: 10_000 } : { rounds: 15, perRound: 20_000 },
    noisyNeighbour: (folder) => ({
      dataDir: path.join(folder, 'noisy-neighbour'),
      measureMs: ci ? 3_000 : 30_000,
      // The full run holds the most of every per-tenant cap (their defaults); CI a part of each.
      rateEntries: ci ? 200 : caps.rateEntriesPerTenant,
      agents: ci ? 20 : Math.min(caps.agentCaps.agentsPerTenant, caps.agentCaps.numbersPerTenant),
      keys: ci ? 5 : caps.auth.keysPerTenant,
      noisyEventsPerS: 20,
    }),
    writerCpu: (folder) => ({
      dataDir: path.join(folder, 'writer-cpu'),
      loadMs: ci ? 3_000 : 15_000,
      eventsPerS: 20,
    }),
    budgets: (folder) => ({
      dataDir: path.join(folder, 'budgets'),
      // The full run holds the most budgets one tenant may (10,000); CI a part.
      budgets: ci ? 500 : 10_000,
      events: ci ? 4_000 : 100_000,
      probes: ci ? 5 : 50,
    }),
  };
}
