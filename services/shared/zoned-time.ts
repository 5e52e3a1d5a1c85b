/**
 * Calendar arithmetic in an IANA time zone with the platform's tz database (Intl). Every zone's
 * offset is a whole number of quarter hours, so the instants found here fall on the 15-minute
 * buckets of usage_rollup_15m and the sums over them are exact.
 */
export { isIanaTimeZone as isTimeZone } from './validation/py-checks.ts';

export interface LocalDate {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

/** Four hundred Gregorian years: 146,097 days, after which the calendar repeats. */
const FOUR_CENTURIES_MS = 146_097 * 86_400_000;

/**
 * Date.UTC for every year: Date.UTC reads a year from 0 to 99 as 1900 to 1999 (0046-07-12 as 1946-07-12),
 * so such a year is taken 400 years on, where the calendar is the same, and moved back.
 */
export function utcInstant(
  year: number,
  monthIndex: number,
  day: number,
  hour = 0,
  minute = 0,
  second = 0,
  ms = 0,
): number {
  return year >= 0 && year < 100
    ? Date.UTC(year + 400, monthIndex, day, hour, minute, second, ms) - FOUR_CENTURIES_MS
    : Date.UTC(year, monthIndex, day, hour, minute, second, ms);
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let cached = formatters.get(timeZone);
  if (cached === undefined) {
    cached = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(timeZone, cached);
  }
  return cached;
}

/** Whether a zone is UTC under another name (`Etc/UTC`, `GMT`, `Zulu`): its wall clock is the UTC one. */
export function isUtcZone(timeZone: string): boolean {
  let utc = utcZones.get(timeZone);
  if (utc === undefined) {
    utc = formatter(timeZone).resolvedOptions().timeZone === 'UTC';
    utcZones.set(timeZone, utc);
  }
  return utc;
}

const utcZones = new Map<string, boolean>();

interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
}

/**
 * The zone's wall clock at an instant. formatToParts costs about 9 µs a call, and a year of daily
 * buckets takes three a day, so a UTC zone reads the Date's UTC fields instead.
 */
function wallClock(instantMs: number, timeZone: string): WallClock {
  const at = new Date(instantMs);
  if (isUtcZone(timeZone))
    return {
      year: at.getUTCFullYear(),
      month: at.getUTCMonth() + 1,
      day: at.getUTCDate(),
      hour: at.getUTCHours(),
      minute: at.getUTCMinutes(),
      second: at.getUTCSeconds(),
    };
  const wall: WallClock = { year: 0, month: 0, day: 0, hour: 0, minute: 0, second: 0 };
  for (const part of formatter(timeZone).formatToParts(at)) {
    if (Object.hasOwn(wall, part.type)) wall[part.type as keyof WallClock] = Number(part.value);
  }
  return wall;
}

/** The zone's date at an instant. */
export function localDate(instantMs: number, timeZone: string): LocalDate {
  const wall = wallClock(instantMs, timeZone);
  return { year: wall.year, month: wall.month, day: wall.day };
}

/** Offset of the zone from UTC at an instant, in milliseconds. */
function offsetMs(instantMs: number, timeZone: string): number {
  const w = wallClock(instantMs, timeZone);
  const asUtc = utcInstant(w.year, w.month - 1, w.day, w.hour, w.minute, w.second);
  return asUtc - Math.floor(instantMs / 1000) * 1000;
}

/** The instant the given local date begins in the zone (its first moment, if midnight is skipped). */
export function startOfLocalDay(date: LocalDate, timeZone: string): number {
  const naive = utcInstant(date.year, date.month - 1, date.day);
  let instant = naive - offsetMs(naive, timeZone);
  // A DST change between the guess and the answer moves the offset once more.
  instant = naive - offsetMs(instant, timeZone);
  const check = localDate(instant, timeZone);
  return check.day === date.day ? instant : instant + 3_600_000;
}

export function addDays(date: LocalDate, days: number): LocalDate {
  const moved = new Date(utcInstant(date.year, date.month - 1, date.day + days));
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: moved.getUTCDate() };
}

export function startOfMonth(date: LocalDate): LocalDate {
  return { year: date.year, month: date.month, day: 1 };
}

export function formatLocalDate({ year, month, day }: LocalDate): string {
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

export interface LocalDateTime extends LocalDate {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly millisecond: number;
}

/** The instant a local wall-clock time names in the zone (a time skipped by DST moves forward). */
export function localToInstant(time: LocalDateTime, timeZone: string): number {
  const naive = utcInstant(time.year, time.month - 1, time.day, time.hour, time.minute, time.second, time.millisecond);
  const guess = naive - offsetMs(naive, timeZone);
  return naive - offsetMs(guess, timeZone);
}

/** Monday of the date's week. */
export function startOfWeek(date: LocalDate): LocalDate {
  const weekday = new Date(utcInstant(date.year, date.month - 1, date.day)).getUTCDay();
  return addDays(date, -((weekday + 6) % 7));
}

export function addMonths(date: LocalDate, months: number): LocalDate {
  const moved = new Date(utcInstant(date.year, date.month - 1 + months, 1));
  return { year: moved.getUTCFullYear(), month: moved.getUTCMonth() + 1, day: 1 };
}
