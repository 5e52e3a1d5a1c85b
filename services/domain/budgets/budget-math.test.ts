import { describe, expect, it } from 'vitest';
import { Exact } from '../../shared/exact-decimal.ts';
import { periodBounds, projectedExhaustion, thresholdsOf } from './budget-math.ts';

const at = Date.parse('2026-11-27T20:00:00Z');
const iso = (bounds: { start: number; end: number } | null) =>
  bounds === null ? null : [new Date(bounds.start).toISOString(), new Date(bounds.end).toISOString()];

describe('budget periods, thresholds and the projection', () => {
  it('bounds a day, a week from Monday and a month in the budget’s zone, and no period for a cap', () => {
    expect(iso(periodBounds({ period: 'day', time_zone: 'UTC' }, at))).toEqual([
      '2026-11-27T00:00:00.000Z',
      '2026-11-28T00:00:00.000Z',
    ]);
    // 20:00 UTC is already the 28th in Kolkata (+05:30).
    expect(iso(periodBounds({ period: 'day', time_zone: 'Asia/Kolkata' }, at))).toEqual([
      '2026-11-27T18:30:00.000Z',
      '2026-11-28T18:30:00.000Z',
    ]);
    expect(iso(periodBounds({ period: 'week', time_zone: 'UTC' }, at))).toEqual([
      '2026-11-23T00:00:00.000Z',
      '2026-11-30T00:00:00.000Z',
    ]);
    expect(iso(periodBounds({ period: 'month', time_zone: 'America/New_York' }, at))).toEqual([
      '2026-11-01T04:00:00.000Z',
      '2026-12-01T05:00:00.000Z',
    ]);
    expect(periodBounds({ period: 'none', time_zone: 'UTC' }, at)).toBeNull();
  });

  it('reads thresholds as percentages of the amount or as amounts, lowest first, exactly', () => {
    const thresholds = thresholdsOf({ amount: '25', thresholds: ['100%', '20.00', '33.3333%'] });
    expect(thresholds.map((t) => [t.label, t.amount.toFixed()])).toEqual([
      ['33.3333%', '8.333325'],
      ['20.00', '20'],
      ['100%', '25'],
    ]);
  });

  it('projects the exhaustion at the period’s rate so far, and says null when reached or not on course', () => {
    const start = Date.parse('2026-11-01T00:00:00Z');
    const end = Date.parse('2026-12-01T00:00:00Z');
    const now = Date.parse('2026-11-11T00:00:00Z');
    // 10 of 25 in 10 days: 25 in 25 days.
    expect(projectedExhaustion(new Exact(10), new Exact(25), start, end, now)).toBe('2026-11-26T00:00:00.000Z');
    expect(projectedExhaustion(new Exact(5), new Exact(25), start, end, now)).toBeNull();
    expect(projectedExhaustion(new Exact(25), new Exact(25), start, end, now)).toBeNull();
    expect(projectedExhaustion(new Exact(0), new Exact(25), start, end, now)).toBeNull();
  });
});
