import { readFileSync } from 'node:fs';
import path from 'node:path';
import { queriesResultFile } from '../queries/dataset.ts';
import { ROOT, runInherited, say } from '../support/processes.ts';
import type { Metric } from '../support/results.ts';

/**
 * The cost queries, one round: `npm run bench:queries` at `events` (the dataset is built by the first
 * round and reused by the next), its p95s and ratios. Each round rewrites queries.json and queries.md,
 * which keep the last round's full tables.
 */
export async function queriesRound(events: number): Promise<Metric[]> {
  say(`cost queries at ${events.toLocaleString('en-US')} events`);
  await runInherited('bench/queries/run.ts', { BENCH_QUERIES_EVENTS: String(events) });
  const queries = JSON.parse(readFileSync(path.join(ROOT, 'bench/results', queriesResultFile(events)), 'utf8')) as {
    metrics: Metric[];
  };
  return queries.metrics.filter((m) => /_p95_ms_|_ratio_/.test(m.name));
}
