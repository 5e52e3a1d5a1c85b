import { describe, expect, it } from 'vitest';
import { addDays, isTimeZone, localDate, startOfLocalDay } from './zoned-time.ts';

describe('zoned time', () => {
  it('knows IANA zones and refuses unknown names', () => {
    expect(isTimeZone('Asia/Kathmandu')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });

  it('finds local midnight exactly at +05:30 and +05:45', () => {
    expect(new Date(startOfLocalDay({ year: 2026, month: 11, day: 1 }, 'Asia/Kolkata')).toISOString()).toBe('2026-10-31T18:30:00.000Z');
    expect(new Date(startOfLocalDay({ year: 2026, month: 11, day: 1 }, 'Asia/Kathmandu')).toISOString()).toBe('2026-10-31T18:15:00.000Z');
    expect(new Date(startOfLocalDay({ year: 2026, month: 11, day: 1 }, 'UTC')).toISOString()).toBe('2026-11-01T00:00:00.000Z');
  });

  it('handles the days DST starts and ends', () => {
    expect(new Date(startOfLocalDay({ year: 2026, month: 3, day: 8 }, 'America/New_York')).toISOString()).toBe('2026-03-08T05:00:00.000Z');
    expect(new Date(startOfLocalDay({ year: 2026, month: 3, day: 9 }, 'America/New_York')).toISOString()).toBe('2026-03-09T04:00:00.000Z');
    expect(new Date(startOfLocalDay({ year: 2026, month: 11, day: 2 }, 'America/New_York')).toISOString()).toBe('2026-11-02T05:00:00.000Z');
  });

  it('reads the local date of an instant and moves across month ends', () => {
    expect(localDate(Date.parse('2026-10-31T18:20:00Z'), 'Asia/Kathmandu')).toEqual({ year: 2026, month: 11, day: 1 });
    expect(addDays({ year: 2026, month: 1, day: 31 }, 1)).toEqual({ year: 2026, month: 2, day: 1 });
  });
});
