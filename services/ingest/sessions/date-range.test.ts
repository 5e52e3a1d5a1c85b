import { describe, expect, it } from 'vitest';
import { dateRangeMs } from './date-range.ts';

describe('dateRangeMs', () => {
  it('makes a date-only end_date cover its whole day, and keeps a date-time end as given', () => {
    const day = new Date('2026-11-22T00:00:00Z');
    expect(dateRangeMs(day, day, '2026-11-22')).toEqual({
      start_ms: day.getTime(),
      end_ms: day.getTime() + 86_399_999,
    });
    expect(dateRangeMs(undefined, day, '2026-11-22T00:00:00Z')).toEqual({ end_ms: day.getTime() });
    expect(dateRangeMs(undefined, undefined, undefined)).toEqual({});
  });
});
