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

export const ratioOf = (value: number, baseline: number) => Math.round((value / baseline) * 100) / 100;

/** The machine a run measured, and how long the run took. */
export function describeMachine(mode: string, startedAt: number, extra: Record<string, number | string> = {}) {
  return {
    cpus: os.cpus().length,
    cpu_model: os.cpus()[0]?.model ?? 'unknown',
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    platform: `${os.platform()} ${os.release()}`,
    mode,
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

/** Writes bench/results/<file>.json and <file>.md. */
export function writeResults(file: string, json: object, markdown: readonly string[]): void {
  const out = path.join(ROOT, 'bench', 'results');
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, `${file}.json`), `${JSON.stringify(json, null, 2)}\n`);
  writeFileSync(path.join(out, `${file}.md`), `${markdown.join('\n')}\n`);
}
