import { SPREAD_FLAG, type Metric, type SteadyMetric } from './results.ts';

/**
 * Steady figures from a noisy machine: a phase measures its figures in rounds, each beside its own
 * baseline, and the rounds are merged by name. A figure is the median of its rounds, a ratio the median
 * of the rounds' ratios (each taken beside its own baseline, minutes apart at most), so a machine that
 * changes speed between rounds moves the value but not the ratio.
 */

/** Runs `round` `runs` times, one after another, and merges what the rounds measured. */
export async function inRounds(
  runs: number,
  round: (index: number) => Promise<readonly Metric[]>,
): Promise<SteadyMetric[]> {
  const rounds: (readonly Metric[])[] = [];
  for (let index = 0; index < runs; index += 1) rounds.push(await round(index));
  return combineRounds(rounds);
}

/**
 * Merges rounds by metric name, in the order the names first appear; a figure some rounds did not give
 * is merged over the rounds that gave it (its `runs` says how many).
 */
export function combineRounds(rounds: readonly (readonly Metric[])[]): SteadyMetric[] {
  const byName = new Map<string, Metric[]>();
  for (const metric of rounds.flat()) {
    const same = byName.get(metric.name);
    if (same === undefined) byName.set(metric.name, [metric]);
    else same.push(metric);
  }
  return [...byName.values()].map(combineMetric);
}

function combineMetric(rounds: readonly Metric[]): SteadyMetric {
  const [first] = rounds as [Metric, ...Metric[]];
  const value = steady(rounds.map((m) => m.value));
  const baselines = present(rounds.map((m) => m.baseline));
  const ratios = present(rounds.map((m) => m.ratio));
  const ratio = ratios.length > 0 ? steady(ratios) : undefined;
  return {
    name: first.name,
    value: value.median,
    unit: first.unit,
    ...(baselines.length > 0 ? { baseline: median(baselines) } : {}),
    ...(ratio !== undefined ? { ratio: ratio.median } : {}),
    ...(first.target !== undefined ? { target: first.target } : {}),
    runs: rounds.length,
    median: value.median,
    min: value.min,
    max: value.max,
    spread: round(value.spread, 2),
    ...(ratio !== undefined
      ? { ratio_min: ratio.min, ratio_max: ratio.max, ratio_spread: round(ratio.spread, 2) }
      : {}),
    flagged: value.spread > SPREAD_FLAG || (ratio?.spread ?? 0) > SPREAD_FLAG,
  };
}

/** Median, min, max and spread of one figure's rounds. */
export function steady(values: readonly number[]) {
  const m = median(values);
  const min = Math.min(...values);
  const max = Math.max(...values);
  // Against the median; a median of 0 (a count that is mostly none) is measured against the largest.
  const scale = Math.abs(m) > 0 ? Math.abs(m) : Math.max(Math.abs(min), Math.abs(max));
  return { median: m, min, max, spread: max === min ? 0 : (max - min) / scale };
}

/** The middle value, or the mean of the two middle ones, kept to one decimal more than the figures. */
export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('the median of no figures');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  if (sorted.length % 2 === 1) return sorted[middle]!;
  return round((sorted[middle - 1]! + sorted[middle]!) / 2, Math.max(...values.map(decimalsOf)) + 1);
}

const present = (values: readonly (number | undefined)[]) => values.filter((v): v is number => v !== undefined);
const decimalsOf = (value: number) => (String(value).split('.')[1] ?? '').length;
const round = (value: number, decimals: number) => Math.round(value * 10 ** decimals) / 10 ** decimals;
