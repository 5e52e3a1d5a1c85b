import { metricTable, ratioOf, type Metric } from '../support/results.ts';
import type { ConstructorGrowth } from './heap-summary.ts';
import type { MemoryUsage } from './inspector-client.ts';
import type { SoakLoadResult } from './load.ts';
import {
  figureOver,
  growthPct,
  median,
  perMinute,
  redisOver,
  slopePerHour,
  type Figure,
  type MemorySample,
} from './memory-series.ts';

/** What one callmeter process showed at the end of the warm-up and at the end of the soak. */
export interface ProcessOutcome {
  readonly name: string;
  /** process.memoryUsage() after a full collection. */
  readonly warm: MemoryUsage;
  readonly end: MemoryUsage;
  /** The self sizes of every node of the heap snapshot, added up: the live heap as the snapshot saw it. */
  readonly snapshotWarm: number;
  readonly snapshotEnd: number;
  /** MiB that malloc_trim returned after the warm-up snapshot; null: gdb could not run it. */
  readonly trimmedAfterWarm: number | null;
  readonly growth: readonly ConstructorGrowth[];
  /** The embedded engine's own accounting at the warm-up snapshot and at the end one (engineFigures). */
  readonly engineWarm: EngineFigures;
  readonly engineEnd: EngineFigures;
}

/** Series of the embedded engine's gauges, by name as the soak reports them, in bytes or parts. */
export type EngineFigures = Readonly<Record<string, number>>;

const ENGINE_SERIES = /^callmeter_clickhouse_engine_(memory_bytes\{part|parts\{state)="([a-z_]+)"\} (\S+)$/gm;

/**
 * The engine's gauges in a /metrics text (services/query/query-metrics.ts): `engine_<part>_bytes` for
 * each part of its memory, `engine_parts_<state>`; none for a process without the embedded engine.
 */
export function engineFigures(metricsText: string): EngineFigures {
  const figures: Record<string, number> = {};
  for (const [, series, label, value] of metricsText.matchAll(ENGINE_SERIES))
    figures[series === 'parts{state' ? `engine_parts_${label}` : `engine_${label}_bytes`] = Number(value);
  return figures;
}

export interface SoakOutcome {
  readonly startedAt: Date;
  readonly warmupMinutes: number;
  readonly rate: number;
  /** Date.now() when the load started; the times below are seconds after it. */
  readonly loadStartedAt: number;
  /** When the warm-up snapshots began, and the end ones. */
  readonly warmAt: number;
  readonly endAt: number;
  readonly loadSeconds: number;
  /** Seconds of samples that each of the two medians compared takes. */
  readonly windowSeconds: number;
  readonly samples: readonly MemorySample[];
  readonly load: SoakLoadResult;
  readonly stored: number;
  readonly processes: readonly ProcessOutcome[];
  /** Redis's keys at the end, by family. */
  readonly redisKeyFamilies: Readonly<Record<string, number>>;
  readonly redisMaxmemory: string;
}

const MIB = 2 ** 20;
const mib = (bytes: number) => Math.round((bytes / MIB) * 10) / 10;
const kib = (bytes: number) => Math.round(bytes / 1024).toLocaleString('en-US');

export function soakMetrics(outcome: SoakOutcome): Metric[] {
  const metrics: Metric[] = [];
  const { samples, warmAt, endAt, windowSeconds } = outcome;
  for (const p of outcome.processes) {
    const atWarm = (figure: Figure) => figureOver(samples, p.name, figure, warmAt - windowSeconds, warmAt);
    const atEnd = (figure: Figure) => figureOver(samples, p.name, figure, endAt - windowSeconds, endAt);
    const windowed = (name: string, figure: Figure): Metric => ({
      name: `${p.name}_${name}`,
      value: atEnd(figure),
      unit: 'MiB',
      baseline: atWarm(figure),
      ratio: ratioOf(atEnd(figure), atWarm(figure)),
    });
    metrics.push(
      { name: `${p.name}_rss_growth_pct`, value: growthPct(atWarm('rss'), atEnd('rss')), unit: '%', target: '<= 5' },
      windowed('rss_mb', 'rss'),
      {
        name: `${p.name}_rss_slope_mb_per_h`,
        value: Math.round(slopePerHour(samples, p.name, 'rss', warmAt, endAt)),
        unit: 'MiB/h',
      },
      windowed('rss_anon_mb', 'rssAnon'),
      windowed('rss_file_mb', 'rssFile'),
      windowed('v8_heap_total_mb', 'heapTotal'),
      windowed('native_anon_mb', 'nativeAnon'),
      afterGc(`${p.name}_heap_used_after_gc_mb`, p.warm.heapUsed, p.end.heapUsed),
      afterGc(`${p.name}_external_after_gc_mb`, p.warm.external, p.end.external),
      afterGc(`${p.name}_heap_snapshot_total_mb`, p.snapshotWarm, p.snapshotEnd),
    );
    for (const [name, end] of Object.entries(p.engineEnd)) {
      const warm = p.engineWarm[name];
      if (warm === undefined) continue;
      const bytes = name.endsWith('_bytes');
      metrics.push({
        name: `${p.name}_${bytes ? name.replace(/_bytes$/, '_mb') : name}`,
        value: bytes ? mib(end) : end,
        unit: bytes ? 'MiB' : 'parts',
        baseline: bytes ? mib(warm) : warm,
        ...(warm > 0 ? { ratio: ratioOf(end, warm) } : {}),
      });
    }
    if (p.trimmedAfterWarm !== null)
      metrics.push({ name: `${p.name}_trimmed_after_warm_snapshot_mb`, value: p.trimmedAfterWarm, unit: 'MiB' });
  }
  const redisAt = (field: 'usedMb' | 'keys') => ({
    baseline: redisOver(samples, field, warmAt - windowSeconds, warmAt),
    value: redisOver(samples, field, endAt - windowSeconds, endAt),
  });
  const redisMemory = redisAt('usedMb');
  const redisKeys = redisAt('keys');
  metrics.push(
    {
      name: 'redis_used_memory_mb',
      unit: 'MiB',
      ...redisMemory,
      ratio: ratioOf(redisMemory.value, redisMemory.baseline),
    },
    { name: 'redis_keys', unit: 'keys', ...redisKeys, ratio: ratioOf(redisKeys.value, redisKeys.baseline) },
    { name: 'soak_events_per_s', value: Math.round(outcome.load.events / outcome.loadSeconds), unit: 'events/s' },
    { name: 'soak_events_acknowledged', value: outcome.load.events, unit: 'events' },
    { name: 'soak_events_stored', value: outcome.stored, unit: 'events' },
    { name: 'soak_request_errors', value: outcome.load.errors, unit: 'requests' },
    { name: 'soak_sessions', value: outcome.load.sessions, unit: 'sessions' },
    { name: 'soak_session_start_failures', value: outcome.load.sessionStartFailures, unit: 'sessions' },
    { name: 'soak_session_end_failures', value: outcome.load.sessionEndFailures, unit: 'sessions' },
    { name: 'soak_reads', value: outcome.load.reads, unit: 'requests' },
    { name: 'soak_read_failures', value: outcome.load.readFailures, unit: 'requests' },
    { name: 'soak_live_messages', value: outcome.load.liveMessages, unit: 'messages' },
    { name: 'soak_load_average', value: Math.round(median(samples.map((s) => s.load)) * 10) / 10, unit: '' },
  );
  return metrics;
}

function afterGc(name: string, warm: number, end: number): Metric {
  return { name, value: mib(end), unit: 'MiB', baseline: mib(warm), ratio: ratioOf(end, warm) };
}

export function soakMarkdown(outcome: SoakOutcome, metrics: readonly Metric[]): string[] {
  const names = outcome.processes.map((p) => p.name);
  const failures = Object.entries(outcome.load.readFailureKinds).map(([kind, count]) => `${kind}: ${count}`);
  const statuses = Object.entries(outcome.load.statuses).map(([status, count]) => `${status}: ${count}`);
  const families = Object.entries(outcome.redisKeyFamilies).sort(([, a], [, b]) => b - a);
  const lines = [
    '# Soak (`npm run soak`)',
    '',
    `${outcome.startedAt.toISOString().slice(0, 16).replace('T', ' ')} UTC: ${Math.round(outcome.loadSeconds / 60)} ` +
      `minutes of load, paced at ${outcome.rate} usage events/s (one a request), warm-up ` +
      `${outcome.warmupMinutes} minutes; heap snapshots ${Math.round(outcome.warmAt)} s and ` +
      `${Math.round(outcome.endAt)} s after the load started. Each windowed figure is the median of the ` +
      `${outcome.windowSeconds} s before the warm-up snapshots (baseline) and of the ${outcome.windowSeconds} s ` +
      `before the end ones (value); the figures after GC are the processes' own after a full collection.` +
      ` Answers to the load's requests: ${statuses.join(', ') || 'none'}.` +
      (failures.length > 0 ? ` Failed reads: ${failures.join(', ')}.` : '') +
      ` Redis ran with maxmemory ${outcome.redisMaxmemory}.` +
      (outcome.processes.some((p) => p.trimmedAfterWarm === null)
        ? ' gdb could not run malloc_trim after the warm-up snapshots: the end RSS includes what they left.'
        : ' After the warm-up snapshots, malloc_trim returned what they left in the allocator (_trimmed_ rows).'),
    '',
    ...metricTable(metrics),
    '',
    '## Redis keys at the end, by family',
    '',
    '| key | keys |',
    '|---|---|',
    ...families.slice(0, 12).map(([family, count]) => `| \`${family}\` | ${count} |`),
    '',
    "## Each minute: events/s served; medians of each process's RSS, its anonymous part and V8 heap, and of Redis's memory (MiB)",
    '',
    `| minute | events/s | ${names.map((n) => `${n} RSS | anon | V8 heap`).join(' | ')} | Redis | load average |`,
    `|---|---|${names.map(() => '---|---|---|').join('')}---|---|`,
    ...perMinute(outcome.samples, names).map((row) => {
      const segment = outcome.load.segments.find(
        (s) => Math.floor((s.startedAt - outcome.loadStartedAt) / 60_000) + 1 === row.minute,
      );
      const rate = segment === undefined ? '' : String(Math.round((segment.events / segment.elapsedMs) * 1000));
      const memory = row.processes.map((p) => `${p.rss} | ${p.rssAnon} | ${p.heapTotal}`);
      return `| ${row.minute} | ${rate} | ${memory.join(' | ')} | ${row.redisMb} | ${row.load.toFixed(1)} |`;
    }),
  ];
  for (const p of outcome.processes) {
    lines.push(
      '',
      `## ${p.name}: constructors that grew most, warm-up to end (self sizes, KiB)`,
      '',
      '| constructor | count warm | count end | KiB warm | KiB end | growth KiB |',
      '|---|---|---|---|---|---|',
      ...p.growth.map(
        (g) =>
          `| ${g.name.replaceAll('|', '\\|')} | ${g.countBefore} | ${g.countAfter} | ${kib(g.sizeBefore)} | ` +
          `${kib(g.sizeAfter)} | ${kib(g.sizeAfter - g.sizeBefore)} |`,
      ),
    );
  }
  return lines;
}

/** The growth lists as the results file keeps them. */
export function growthJson(outcome: SoakOutcome) {
  return Object.fromEntries(
    outcome.processes.map((p) => [
      p.name,
      p.growth.map((g) => ({
        constructor: g.name,
        count_warm: g.countBefore,
        count_end: g.countAfter,
        self_size_warm: g.sizeBefore,
        self_size_end: g.sizeAfter,
      })),
    ]),
  );
}
