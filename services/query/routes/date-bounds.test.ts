import { describe, expect, it } from 'vitest';
import { AppError } from '../../shared/errors.ts';
import { dateRangeOf } from './date-bounds.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());
const range = (query: { start_date?: string; end_date?: string }, tz = 'UTC') => {
  const { start, end } = dateRangeOf(query, tz);
  return { start: iso(start), end: iso(end) };
};

function itemsOf(run: () => unknown) {
  try {
    run();
  } catch (error) {
    if (error instanceof AppError) return error.detail;
  }
  throw new Error('expected a validation error');
}

describe('start_date and end_date of the cost queries', () => {
  it('reads bare dates as whole local days, the end day included', () => {
    expect(range({ start_date: '2026-11-01', end_date: '2026-11-22' })).toEqual({
      start: '2026-11-01T00:00:00.000Z',
      end: '2026-11-23T00:00:00.000Z',
    });
    expect(range({ start_date: '2026-11-01', end_date: '2026-11-01' }, 'Asia/Kathmandu')).toEqual({
      start: '2026-10-31T18:15:00.000Z',
      end: '2026-11-01T18:15:00.000Z',
    });
  });

  it('reads naive date-times in the zone and honours explicit offsets', () => {
    expect(range({ start_date: '2026-11-01T06:00:00' }, 'Asia/Kolkata')).toEqual({
      start: '2026-11-01T00:30:00.000Z',
      end: null,
    });
    expect(range({ start_date: '2026-11-01T06:00:00+01:00' }, 'Asia/Kolkata')).toEqual({
      start: '2026-11-01T05:00:00.000Z',
      end: null,
    });
    expect(range({ end_date: '2026-11-01T06:00:00Z' })).toEqual({ start: null, end: '2026-11-01T06:00:00.001Z' });
  });

  it('treats empty values as absent', () => {
    expect(range({ start_date: '', end_date: '' })).toEqual({ start: null, end: null });
  });

  it('refuses unparseable dates with the items a pydantic datetime gives, both at once', () => {
    expect(itemsOf(() => dateRangeOf({ start_date: 'yesterday', end_date: '2026-13-01' }, 'UTC'))).toEqual([
      {
        type: 'datetime_from_date_parsing',
        loc: ['query', 'start_date'],
        msg: 'Input should be a valid datetime or date, input is too short',
        input: 'yesterday',
        ctx: { error: 'input is too short' },
      },
      {
        type: 'datetime_from_date_parsing',
        loc: ['query', 'end_date'],
        msg: 'Input should be a valid datetime or date, month value is outside expected range of 1-12',
        input: '2026-13-01',
        ctx: { error: 'month value is outside expected range of 1-12' },
      },
    ]);
  });

  it('refuses an end before the start', () => {
    expect(itemsOf(() => dateRangeOf({ start_date: '2026-11-02', end_date: '2026-11-01' }, 'UTC'))).toMatchObject([
      { type: 'value_error', loc: ['query', 'end_date'] },
    ]);
  });
});
