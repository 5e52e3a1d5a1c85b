import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ROOT } from './processes.ts';

/** One figure of a results file (`{"machine","metrics":[...]}`), beside its baseline when it has one. */
export interface Metric {
  readonly name: string;
  readonly value: number;
  readonly unit: string;
  readonly baseline?: number;
  readonly ratio?: number;
  readonly target?: string;
}

/** A figure merged over a phase's rounds (bench/support/rounds.ts): `value` is their median. */
export interface SteadyMetric extends Metric {
  /** Rounds that gave this figure. */
  readonly runs: number;
  /** Equal to `value`. */
  readonly median: number;
  readonly min: number;
  readonly max: number;
  /** (max - min) / median of the value. */
  readonly spread: number;
  readonly ratio_min?: number;
  readonly ratio_max?: number;
  readonly ratio_spread?: number;
  /** The value's spread or the ratio's exceeds SPREAD_FLAG: one round could have told another story. */
  readonly flagged: boolean;
}

/** Past this spread over the rounds, (max - min) / median, a figure is flagged. */
export const SPREAD_FLAG = 0.25;
const FLAG = '⚠';

export const ratioOf = (value: number, baseline: number) => Math.round((value / baseline) * 100) / 100;

/** The machine a run measured, when the run started and how long it took. */
export function describeMachine(mode: string, startedAt: number, extra: Record<string, number | string> = {}) {
  return {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    mode,
    started_at: new Date(startedAt).toISOString(),
    duration_s: Math.round((Date.now() - startedAt) / 1000),
    ...extra,
  };
}

/** The metrics as the Markdown table of the results files. */
export function metricTable(metrics: readonly Metric[]): string[] {
  return [
    '| metric | value | baseline | ratio | target |',
    '|---|---|---|---|---|',
    ...metrics.map(
      (m) => `| ${m.name} | ${m.value} ${m.unit} | ${m.baseline ?? ''} | ${m.ratio ?? ''} | ${m.target ?? ''} |`,
    ),
  ];
}

/** Figures merged over rounds as a Markdown table: the median, the range, and a mark on unsteady ones. */
export function steadyTable(metrics: readonly SteadyMetric[]): string[] {
  // A figure measured once has no range to show.
  const range = (runs: number, min: number | undefined, max: number | undefined) =>
    runs === 1 || min === undefined || max === undefined ? '' : min === max ? `${min}` : `${min}–${max}`;
  const mark = (spread: number | undefined) => (spread !== undefined && spread > SPREAD_FLAG ? ` ${FLAG}` : '');
  return [
    '| metric | value (median) | min–max | baseline | ratio (median) | ratio min–max | target | runs |',
    '|---|---|---|---|---|---|---|---|',
    ...metrics
      .map((m) =>
        [
          m.name,
          `${m.value} ${m.unit}${mark(m.spread)}`,
          range(m.runs, m.min, m.max),
          m.baseline ?? '',
          m.ratio === undefined ? '' : `${m.ratio}${mark(m.ratio_spread)}`,
          range(m.runs, m.ratio_min, m.ratio_max),
          m.target ?? '',
          m.runs,
        ].join(' | '),
      )
      .map((row) => `| ${row} |`),
    '',
    `${FLAG}: the figure's spread over its runs, (max − min) / median, exceeds ${SPREAD_FLAG * 100} %.`,
  ];
}

/**
 * Writes bench/results/<file>.json and <file>.md; with `dated`, a copy of both in bench/results/runs/,
 * named by when the run started (2026-11-27T0612Z.json, or 2026-11-27T0612Z-<phase>.json), so that a
 * later run replaces the latest files but never an earlier run's figures.
 */
export function writeResults(
  file: string,
  json: object,
  markdown: readonly string[],
  dated?: { readonly startedAt: number; readonly suffix?: string },
): string[] {
  const out = path.join(ROOT, 'bench', 'results');
  const written = [path.join(out, file)];
  if (dated !== undefined) written.push(path.join(out, 'runs', datedName(dated.startedAt, dated.suffix)));
  for (const base of written) {
    mkdirSync(path.dirname(base), { recursive: true });
    writeFileSync(`${base}.json`, `${JSON.stringify(json, null, 2)}\n`);
    writeFileSync(`${base}.md`, `${markdown.join('\n')}\n`);
  }
  return written.map((base) => path.relative(ROOT, base));
}

/** A dated run's file name, from its start in UTC to the minute: 2026-11-27T0612Z, or …Z-<suffix>. */
export function datedName(startedAt: number, suffix?: string): string {
  const stamp = `${new Date(startedAt).toISOString().slice(0, 16).replace(':', '')}Z`;
  return suffix === undefined ? stamp : `${stamp}-${suffix}`;
}
