/** Latency percentiles of sequential requests, after a warm-up. */
export interface Latency {
  readonly p50: number;
  readonly p95: number;
  readonly requests: number;
}

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

export async function measure(
  url: string,
  headers: Record<string, string>,
  warmup: number,
  requests: number,
): Promise<Latency> {
  const once = async () => {
    const started = performance.now();
    const response = await fetch(url, { headers });
    await response.arrayBuffer();
    if (response.status !== 200) throw new Error(`${url} answered ${response.status}`);
    return performance.now() - started;
  };
  for (let i = 0; i < warmup; i += 1) await once();
  const times: number[] = [];
  for (let i = 0; i < requests; i += 1) times.push(await once());
  times.sort((a, b) => a - b);
  return { p50: round(percentile(times, 50)), p95: round(percentile(times, 95)), requests };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
