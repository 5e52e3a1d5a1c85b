import { describe, expect, it } from 'vitest';
import { figureOver, growthPct, perMinute, slopePerHour, type MemorySample } from './memory-series.ts';

const sample = (at: number, rss: number, heapTotal = 100, load = 1): MemorySample => ({
  at,
  processes: { ingest: { rss, rssAnon: rss - 200, rssFile: 200, heapTotal, heapUsed: 50, external: 5 } },
  load,
  redis: { usedMb: at / 10, keys: at },
});

describe('memory series', () => {
  it('compares medians of windows, so one sample on either side of a collection moves nothing', () => {
    const samples = [
      sample(0, 400),
      sample(5, 900),
      sample(10, 410),
      sample(100, 440),
      sample(105, 20),
      sample(110, 450),
    ];
    expect(figureOver(samples, 'ingest', 'rss', 0, 10)).toBe(410);
    expect(figureOver(samples, 'ingest', 'rss', 100, 110)).toBe(440);
    expect(growthPct(410, 440)).toBe(7.3);
    expect(figureOver(samples, 'ingest', 'nativeAnon', 0, 10)).toBe(110);
  });

  it('gives the least-squares slope in MiB an hour', () => {
    const samples = [0, 60, 120, 180].map((at) => sample(at, 400 + at / 60));
    expect(slopePerHour(samples, 'ingest', 'rss', 0, 180)).toBeCloseTo(60);
  });

  it('groups the samples by minute', () => {
    const rows = perMinute([sample(0, 400, 100, 2), sample(30, 420, 110, 4), sample(65, 500, 120, 3)], ['ingest']);
    expect(rows).toEqual([
      { minute: 1, processes: [{ rss: 410, rssAnon: 210, heapTotal: 105 }], redisMb: 2, load: 3 },
      { minute: 2, processes: [{ rss: 500, rssAnon: 300, heapTotal: 120 }], redisMb: 7, load: 3 },
    ]);
  });
});
