import { describe, expect, it } from 'vitest';
import {
  addDays,
  addMonths,
  isTimeZone,
  isUtcZone,
  localDate,
  localToInstant,
  startOfLocalDay,
  startOfWeek,
  utcInstant,
} from './zoned-time.ts';

describe('zoned time', () => {
  it('knows IANA zones and refuses unknown names', () => {
    expect(isTimeZone('Asia/Kathmandu')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    expect(isTimeZone('Mars/Olympus')).toBe(false);
  });

  it('finds local midnight exactly at +05:30 and +05:45', () => {
    expect(new Date(startOfLocalDay({ year: 2026, month: 11, day: 1 }, 'Asia/Kolkata')).toISOString()).toBe(
      '2026-10-31T18:30:00.000Z',
    );
    expect(new Date(startOfLocalDay({ year: 2026, month: 11, day: 1 }, 'Asia/Kathmandu')).toISOString()).toBe(
      '2026-10-31T18:15:00.000Z',
    );
    expect(new Date(startOfLocalDay({ year: 2026, month: 11, day: 1 }, 'UTC')).toISOString()).toBe(
      '2026-11-01T00:00:00.000Z',
    );
  });

  it('handles the days DST starts and ends', () => {
    expect(new Date(startOfLocalDay({ year: 2026, month: 3, day: 8 }, 'America/New_York')).toISOString()).toBe(
      '2026-03-08T05:00:00.000Z',
    );
    expect(new Date(startOfLocalDay({ year: 2026, month: 3, day: 9 }, 'America/New_York')).toISOString()).toBe(
      '2026-03-09T04:00:00.000Z',
    );
    expect(new Date(startOfLocalDay({ year: 2026, month: 11, day: 2 }, 'America/New_York')).toISOString()).toBe(
      '2026-11-02T05:00:00.000Z',
    );
  });

  it('reads a UTC zone under any of its names from the UTC calendar, as Intl reads a zone at +00:00', () => {
    expect(['UTC', 'Etc/UTC', 'GMT', 'Zulu', 'utc'].map(isUtcZone)).toEqual([true, true, true, true, true]);
    expect(['Europe/London', 'Africa/Abidjan', 'Asia/Kolkata'].map(isUtcZone)).toEqual([false, false, false]);
    // Africa/Abidjan has kept +00:00 since 1912, so Intl's reading of it is the one the UTC names must give.
    for (
      let instant = Date.parse('1999-12-31T23:59:59.999Z');
      instant < Date.parse('2001-01-02Z');
      instant += 36_055_013
    ) {
      const date = localDate(instant, 'Africa/Abidjan');
      for (const zone of ['UTC', 'Etc/UTC', 'GMT']) {
        expect(localDate(instant, zone)).toEqual(date);
        expect(startOfLocalDay(date, zone)).toBe(startOfLocalDay(date, 'Africa/Abidjan'));
        expect(localToInstant({ ...date, hour: 13, minute: 45, second: 7, millisecond: 250 }, zone)).toBe(
          localToInstant({ ...date, hour: 13, minute: 45, second: 7, millisecond: 250 }, 'Africa/Abidjan'),
        );
      }
    }
  });

  it('reads the local date of an instant and moves across month ends', () => {
    expect(localDate(Date.parse('2026-10-31T18:20:00Z'), 'Asia/Kathmandu')).toEqual({ year: 2026, month: 11, day: 1 });
    expect(addDays({ year: 2026, month: 1, day: 31 }, 1)).toEqual({ year: 2026, month: 2, day: 1 });
  });
});

describe('wall-clock times and calendar steps', () => {
  it('turns a local wall-clock time into its instant, at +05:45 and across DST', () => {
    const at = (y: number, mo: number, d: number, h: number, mi: number, tz: string) =>
      new Date(
        localToInstant({ year: y, month: mo, day: d, hour: h, minute: mi, second: 0, millisecond: 0 }, tz),
      ).toISOString();
    expect(at(2026, 11, 1, 6, 0, 'Asia/Kathmandu')).toBe('2026-11-01T00:15:00.000Z');
    expect(at(2026, 7, 1, 12, 0, 'America/New_York')).toBe('2026-07-01T16:00:00.000Z');
    expect(at(2026, 1, 1, 12, 0, 'America/New_York')).toBe('2026-01-01T17:00:00.000Z');
  });

  it('finds the Monday of a week and steps months across a year end', () => {
    expect(startOfWeek({ year: 2026, month: 11, day: 22 })).toEqual({ year: 2026, month: 11, day: 16 });
    expect(startOfWeek({ year: 2026, month: 11, day: 16 })).toEqual({ year: 2026, month: 11, day: 16 });
    expect(startOfWeek({ year: 2026, month: 1, day: 1 })).toEqual({ year: 2025, month: 12, day: 29 });
    expect(addMonths({ year: 2026, month: 12, day: 1 }, 1)).toEqual({ year: 2027, month: 1, day: 1 });
  });

  it('keeps a year from 0 to 99 in its own century, which Date.UTC would move to the 1900s', () => {
    expect(new Date(utcInstant(46, 6, 12)).toISOString()).toBe('0046-07-12T00:00:00.000Z');
    expect(new Date(utcInstant(99, 11, 32)).toISOString()).toBe('0100-01-01T00:00:00.000Z');
    expect(utcInstant(2026, 10, 27, 19, 5, 1, 7)).toBe(Date.UTC(2026, 10, 27, 19, 5, 1, 7));
    const day = { year: 46, month: 7, day: 12 };
    expect(new Date(startOfLocalDay(day, 'UTC')).toISOString()).toBe('0046-07-12T00:00:00.000Z');
    expect(localDate(startOfLocalDay(day, 'Europe/Paris'), 'Europe/Paris')).toEqual(day);
    expect(addDays({ year: 99, month: 12, day: 31 }, 1)).toEqual({ year: 100, month: 1, day: 1 });
    expect(startOfWeek(day)).toEqual({ year: 46, month: 7, day: 9 });
  });
});
