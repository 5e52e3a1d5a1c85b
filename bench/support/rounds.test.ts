import { describe, expect, it } from 'vitest';
import type { Metric } from './results.ts';
import { combineRounds, inRounds, median } from './rounds.ts';

const figure = (value: number, overrides: Partial<Metric> = {}): Metric => ({
  name: 'ingest_single_events_per_s',
  value,
  unit: 'events/s',
  ...overrides,
});

/** One round's ingest figure beside its bare baseline, the ratio as the phase computes it. */
const beside = (value: number, baseline: number): Metric =>
  figure(value, { baseline, ratio: Math.round((value / baseline) * 100) / 100, target: '>= 0.4' });

describe('combining rounds', () => {
  it('reports the median of three rounds as the value, with the min and max beside it', () => {
    const [steady] = combineRounds([[figure(3000)], [figure(3300)], [figure(3100)]]);
    expect(steady).toMatchObject({ value: 3100, median: 3100, min: 3000, max: 3300, runs: 3, flagged: false });
    expect(steady!.spread).toBe(0.1);
  });

  it('takes the mean of the middle two for two rounds, kept to one decimal more than the figures', () => {
    expect(median([3323, 3324])).toBe(3323.5);
    expect(median([4.657, 4.7])).toBe(4.6785);
    const [steady] = combineRounds([[figure(1000)], [figure(1100)]]);
    expect(steady).toMatchObject({ value: 1050, min: 1000, max: 1100, runs: 2 });
  });

  it('gives one round as it was measured, spread 0, runs 1', () => {
    const [steady] = combineRounds([[beside(3323, 16698)]]);
    expect(steady).toEqual({
      name: 'ingest_single_events_per_s',
      value: 3323,
      unit: 'events/s',
      baseline: 16698,
      ratio: 0.2,
      target: '>= 0.4',
      runs: 1,
      median: 3323,
      min: 3323,
      max: 3323,
      spread: 0,
      ratio_min: 0.2,
      ratio_max: 0.2,
      ratio_spread: 0,
      flagged: false,
    });
  });

  it("takes a ratio as the median of the rounds' own ratios, not the ratio of the medians", () => {
    // The machine ran at half speed in the second round: values and baselines move, ratios do not.
    const [steady] = combineRounds([[beside(3400, 17000)], [beside(1900, 9000)], [beside(3300, 16000)]]);
    expect(steady).toMatchObject({ value: 3300, baseline: 16000, ratio: 0.21, ratio_min: 0.2, ratio_max: 0.21 });
    expect(steady!.ratio_spread).toBe(0.05);
    // The value's own spread is flagged: one round alone would have said 1,900 or 3,400.
    expect(steady!.spread).toBe(0.45);
    expect(steady!.flagged).toBe(true);
  });

  it('flags a figure whose spread exceeds 25 % of its median, not one at exactly 25 %', () => {
    const [atQuarter] = combineRounds([[figure(100)], [figure(100)], [figure(125)]]);
    expect(atQuarter).toMatchObject({ spread: 0.25, flagged: false });
    const [past] = combineRounds([[figure(100)], [figure(100)], [figure(126)]]);
    expect(past).toMatchObject({ spread: 0.26, flagged: true });
  });

  it('flags a steady value whose ratio moved by more than a quarter', () => {
    const [steady] = combineRounds([[beside(3000, 10000)], [beside(3000, 15000)], [beside(3000, 8000)]]);
    expect(steady).toMatchObject({ spread: 0, ratio: 0.3, ratio_min: 0.2, ratio_max: 0.38, flagged: true });
  });

  it('keeps every name, unit and target, in the order of the first round', () => {
    const round = (single: number): Metric[] => [
      beside(single, 16000),
      { name: 'ingest_rss_mb', value: 498, unit: 'MiB' },
      { name: 'e2e_freshness_p95_ms', value: 924, unit: 'ms', target: '<= 1000' },
    ];
    const steady = combineRounds([round(3000), round(3100), round(3200)]);
    expect(steady.map((m) => [m.name, m.unit, m.target])).toEqual([
      ['ingest_single_events_per_s', 'events/s', '>= 0.4'],
      ['ingest_rss_mb', 'MiB', undefined],
      ['e2e_freshness_p95_ms', 'ms', '<= 1000'],
    ]);
    expect(steady[1]).not.toHaveProperty('ratio');
    expect(steady[1]).not.toHaveProperty('baseline');
  });

  it('merges a figure only some rounds gave over those rounds', () => {
    const live = { name: 'live_stream_after_stored_p95_ms', value: 38, unit: 'ms' };
    const steady = combineRounds([[figure(3000), live], [figure(3100)], [figure(3200), { ...live, value: 40 }]]);
    expect(steady[1]).toMatchObject({ name: live.name, value: 39, runs: 2 });
  });

  it('measures a median of 0 against the largest figure, so a count that was once not 0 is flagged', () => {
    const claims = (value: number) => ({ name: 'redis_usage_claims_after', value, unit: 'keys' });
    expect(combineRounds([[claims(0)], [claims(0)], [claims(0)]])[0]).toMatchObject({ spread: 0, flagged: false });
    expect(combineRounds([[claims(0)], [claims(0)], [claims(3)]])[0]).toMatchObject({ spread: 1, flagged: true });
  });

  it('runs the rounds one after another and merges them', async () => {
    const order: number[] = [];
    const steady = await inRounds(3, async (index) => {
      order.push(index);
      return [figure(1000 + index * 100)];
    });
    expect(order).toEqual([0, 1, 2]);
    expect(steady[0]).toMatchObject({ value: 1100, runs: 3 });
  });
});
