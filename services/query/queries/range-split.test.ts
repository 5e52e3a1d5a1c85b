import { describe, expect, it } from 'vitest';
import { DAY_MS, QUARTER_HOUR_MS, splitRange } from './range-split.ts';

describe('splitting a range into rollup buckets and raw edges', () => {
  it('reads an aligned range from the rollup only', () => {
    expect(splitRange({ start: 4 * QUARTER_HOUR_MS, end: 8 * QUARTER_HOUR_MS }, QUARTER_HOUR_MS, 'bucket')).toEqual({
      rollup:
        "bucket >= fromUnixTimestamp64Milli(toInt64({inner_start:Int64}), 'UTC') AND bucket < fromUnixTimestamp64Milli(toInt64({inner_end:Int64}), 'UTC')",
      events: null,
      params: { range_start: 3_600_000, range_end: 7_200_000, inner_start: 3_600_000, inner_end: 7_200_000 },
    });
  });

  it('reads the unaligned edges from the events', () => {
    const split = splitRange({ start: DAY_MS + 5, end: 4 * DAY_MS - 5 }, DAY_MS, 'day');
    expect(split.params).toEqual({
      range_start: DAY_MS + 5,
      range_end: 4 * DAY_MS - 5,
      inner_start: 2 * DAY_MS,
      inner_end: 3 * DAY_MS,
    });
    expect(split.rollup).not.toBeNull();
    expect(split.events).toBe(
      "(occurred_at >= fromUnixTimestamp64Milli(toInt64({range_start:Int64}), 'UTC') AND occurred_at < fromUnixTimestamp64Milli(toInt64({inner_start:Int64}), 'UTC')) OR (occurred_at >= fromUnixTimestamp64Milli(toInt64({inner_end:Int64}), 'UTC') AND occurred_at < fromUnixTimestamp64Milli(toInt64({range_end:Int64}), 'UTC'))",
    );
  });

  it('reads a range inside one bucket from the events only', () => {
    const split = splitRange({ start: 10, end: 20 }, QUARTER_HOUR_MS, 'bucket');
    expect(split.rollup).toBeNull();
    expect(split.events).toContain('{range_start:Int64}');
  });

  it('leaves open ends unbounded', () => {
    expect(splitRange({ start: null, end: null }, DAY_MS, 'day')).toEqual({ rollup: 'true', events: null, params: {} });
    expect(splitRange({ start: 5, end: null }, DAY_MS, 'day')).toMatchObject({
      rollup: "day >= fromUnixTimestamp64Milli(toInt64({inner_start:Int64}), 'UTC')",
      params: { range_start: 5, inner_start: DAY_MS },
    });
  });

  it('names its parameters with a prefix, so that two splits can share one statement', () => {
    const split = splitRange({ start: 5, end: DAY_MS + 5 }, QUARTER_HOUR_MS, 'bucket', 'occurred_at', 'e0_');
    expect(split.params).toEqual({
      e0_range_start: 5,
      e0_range_end: DAY_MS + 5,
      e0_inner_start: QUARTER_HOUR_MS,
      e0_inner_end: DAY_MS,
    });
    expect(split.rollup).toBe(
      "bucket >= fromUnixTimestamp64Milli(toInt64({e0_inner_start:Int64}), 'UTC') AND bucket < fromUnixTimestamp64Milli(toInt64({e0_inner_end:Int64}), 'UTC')",
    );
    expect(split.events).toContain('{e0_range_start:Int64}');
  });
});
