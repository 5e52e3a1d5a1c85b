import { describe, expect, it } from 'vitest';
import { footprintMetrics, heapTotalMb, type FootprintSnapshot } from './footprint.ts';

const at = (rss: number, anon: number, heap: number, threads: number): FootprintSnapshot => ({
  rss,
  anon,
  heap,
  threads,
});

describe('the footprint figures', () => {
  it('hold the idle and the loaded RSS to their targets, beside their anonymous part, heap and threads', () => {
    const metrics = footprintMetrics(at(440.4, 208.6, 107.2, 39), at(601.5, 365.2, 190.9, 43), 640.2);
    expect(metrics).toEqual([
      { name: 'embedded_rss_idle_mb', value: 440, unit: 'MiB', target: '<= 300' },
      { name: 'embedded_rss_idle_anon_mb', value: 209, unit: 'MiB' },
      { name: 'embedded_rss_idle_heap_mb', value: 107, unit: 'MiB' },
      { name: 'embedded_threads_idle', value: 39, unit: 'threads' },
      { name: 'embedded_rss_c64_mb', value: 602, unit: 'MiB', target: '<= 500' },
      { name: 'embedded_rss_c64_anon_mb', value: 365, unit: 'MiB' },
      { name: 'embedded_rss_c64_heap_mb', value: 191, unit: 'MiB' },
      { name: 'embedded_threads_c64', value: 43, unit: 'threads' },
      { name: 'embedded_rss_c64_peak_mb', value: 640, unit: 'MiB' },
    ]);
  });

  it("reads V8's heap total from the process's /metrics", () => {
    const text = [
      '# TYPE nodejs_heap_size_total_bytes gauge',
      'nodejs_heap_size_total_bytes 111984640',
      'nodejs_heap_size_used_bytes 60938784',
    ].join('\n');
    expect(heapTotalMb(text)).toBeCloseTo(106.8, 1);
    expect(() => heapTotalMb('nodejs_heap_size_used_bytes 1')).toThrow(/nodejs_heap_size_total_bytes/);
  });
});
