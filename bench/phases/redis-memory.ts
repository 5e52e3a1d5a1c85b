import { runJson, say } from '../support/processes.ts';
import type { Metric } from '../support/results.ts';

/**
 * Redis memory through the Kafka path (bench/load/redis-memory.ts, its own broker and Redis): 1,000
 * live calls, then `events` usage events of them published straight to the usage topic while one
 * consumer stores them.
 */
const LIVE_SESSIONS = 1_000;

/** What bench/load/redis-memory.ts prints. */
interface RedisMemory {
  readonly events: number;
  readonly rows_per_s: number;
  readonly used_memory_before: number;
  readonly used_memory_after: number;
  /** As a quarter, a half, three quarters and all of the events were stored. */
  readonly used_memory_by_quarter: readonly number[];
  readonly used_memory_peak: number;
  readonly claims_after: number;
  readonly claims_at_most: number;
  readonly live_usage_entries_per_call_at_most: number;
}

/** Runs once (its length is the consumer's drain of the events): `runs: 1` in the results. */
export async function redisMemory(folder: string, events: number): Promise<Metric[]> {
  say(`Redis memory: ${events.toLocaleString('en-US')} usage events of ${LIVE_SESSIONS} live calls through Kafka`);
  const run = await runJson<RedisMemory>('bench/load/redis-memory.ts', [
    JSON.stringify({ folder, events, live: LIVE_SESSIONS }),
  ]);
  return redisMemoryMetrics(run);
}

/** Redis holds live state, not history: its memory after the events, against the 64 MiB it may take. */
function redisMemoryMetrics(run: RedisMemory): Metric[] {
  const mib = (bytes: number) => Math.round((bytes / 1_048_576) * 10) / 10;
  return [
    {
      name: 'redis_used_memory_after_usage_mib',
      value: mib(run.used_memory_after),
      unit: 'MiB',
      baseline: mib(run.used_memory_before),
      target: '< 64',
    },
    { name: 'redis_used_memory_peak_during_usage_mib', value: mib(run.used_memory_peak), unit: 'MiB' },
    { name: 'redis_used_memory_at_half_of_usage_mib', value: mib(run.used_memory_by_quarter[1] ?? 0), unit: 'MiB' },
    { name: 'redis_usage_claims_after', value: run.claims_after, unit: 'keys' },
    { name: 'redis_usage_claims_in_flight_at_most', value: run.claims_at_most, unit: 'keys' },
    { name: 'redis_memory_phase_events', value: run.events, unit: 'events' },
    { name: 'redis_memory_phase_rows_per_s', value: run.rows_per_s, unit: 'rows/s' },
  ];
}
