/** One process's memory at one reading of the soak's sampler, in MiB. */
export interface ProcessMemory {
  /** Resident memory (/proc/<pid>/status), and its anonymous and file-backed parts. */
  readonly rss: number;
  readonly rssAnon: number;
  readonly rssFile: number;
  /** process.memoryUsage() in the process. */
  /** What V8 holds for the JS heap, used or not (young generation, old space, code). */
  readonly heapTotal: number;
  readonly heapUsed: number;
  readonly external: number;
}

export interface MemorySample {
  /** Seconds since the load started. */
  readonly at: number;
  readonly processes: Readonly<Record<string, ProcessMemory>>;
  /** The shared Redis: used_memory (MiB) and its number of keys. */
  readonly redis: { readonly usedMb: number; readonly keys: number };
  /** The machine's 1-minute load average: how busy the shared cores were. */
  readonly load: number;
}

/**
 * A figure of the samples. `nativeAnon` is the anonymous resident memory less V8's heap: what native
 * code allocated (the embedded ClickHouse engine, Buffers, the allocator's arenas) and thread stacks.
 */
export type Figure = keyof ProcessMemory | 'nativeAnon';

const figureOf = (memory: ProcessMemory, figure: Figure) =>
  figure === 'nativeAnon' ? memory.rssAnon - memory.heapTotal : memory[figure];

export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

function points(samples: readonly MemorySample[], process: string, figure: Figure, from: number, to: number) {
  return samples
    .filter((s) => s.at >= from && s.at <= to && s.processes[process] !== undefined)
    .map((s) => [s.at, figureOf(s.processes[process]!, figure)] as const);
}

/** The median of one figure of one process over the samples taken in [from, to] seconds, to 0.1 MiB. */
export function figureOver(
  samples: readonly MemorySample[],
  process: string,
  figure: Figure,
  from: number,
  to: number,
): number {
  return Math.round(median(points(samples, process, figure, from, to).map(([, y]) => y)) * 10) / 10;
}

/** The least-squares slope of one figure over the samples taken in [from, to] seconds, in MiB an hour. */
export function slopePerHour(
  samples: readonly MemorySample[],
  process: string,
  figure: Figure,
  from: number,
  to: number,
): number {
  const xy = points(samples, process, figure, from, to);
  if (xy.length < 2) return Number.NaN;
  const meanX = xy.reduce((sum, [x]) => sum + x, 0) / xy.length;
  const meanY = xy.reduce((sum, [, y]) => sum + y, 0) / xy.length;
  const covariance = xy.reduce((sum, [x, y]) => sum + (x - meanX) * (y - meanY), 0);
  const variance = xy.reduce((sum, [x]) => sum + (x - meanX) ** 2, 0);
  return (covariance / variance) * 3600;
}

/** The median of Redis's used memory or key count over the samples taken in [from, to] seconds. */
export function redisOver(samples: readonly MemorySample[], field: 'usedMb' | 'keys', from: number, to: number) {
  return Math.round(median(samples.filter((s) => s.at >= from && s.at <= to).map((s) => s.redis[field])) * 10) / 10;
}

/** Growth from `before` to `after` in per cent, to one decimal. */
export const growthPct = (before: number, after: number) => Math.round(((after - before) / before) * 1000) / 10;

/** The minutes of the samples, each with the medians of every process's RSS, anonymous part and V8 heap, and Redis's memory. */
export function perMinute(samples: readonly MemorySample[], processes: readonly string[]) {
  const minutes = new Set(samples.map((s) => Math.floor(s.at / 60)));
  return [...minutes].map((minute) => {
    const [from, to] = [minute * 60, minute * 60 + 60 - 1e-9];
    return {
      minute: minute + 1,
      processes: processes.map((p) => ({
        rss: Math.round(figureOver(samples, p, 'rss', from, to)),
        rssAnon: Math.round(figureOver(samples, p, 'rssAnon', from, to)),
        heapTotal: Math.round(figureOver(samples, p, 'heapTotal', from, to)),
      })),
      redisMb: Math.round(redisOver(samples, 'usedMb', from, to)),
      load: median(samples.filter((s) => s.at >= from && s.at <= to).map((s) => s.load)),
    };
  });
}
