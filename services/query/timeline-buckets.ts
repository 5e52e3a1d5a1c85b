import {
  addDays,
  addMonths,
  formatLocalDate,
  localDate,
  startOfLocalDay,
  startOfMonth,
  startOfWeek,
  type LocalDate,
} from '../shared/zoned-time.ts';

export type Period = 'daily' | 'weekly' | 'monthly';

export interface TimelineBucket {
  /** The bucket's first local day, YYYY-MM-DD. */
  readonly date: string;
  readonly start: number;
  readonly end: number;
}

/** The most buckets one timeline answers: about 27 years of days. */
export const MAX_BUCKETS = 10_000;

const FIRST_DAY: Record<Period, (date: LocalDate) => LocalDate> = {
  daily: (d) => d,
  weekly: startOfWeek,
  monthly: startOfMonth,
};
const NEXT: Record<Period, (date: LocalDate) => LocalDate> = {
  daily: (d) => addDays(d, 1),
  weekly: (d) => addDays(d, 7),
  monthly: (d) => addMonths(d, 1),
};

/** The local first day of the bucket an instant falls in. */
export function bucketOf(instantMs: number, period: Period, timeZone: string): LocalDate {
  return FIRST_DAY[period](localDate(instantMs, timeZone));
}

/**
 * Every bucket that [start, end) touches, oldest first, cut at local midnights of the zone; null
 * when there would be more than MAX_BUCKETS.
 */
export function timelineBuckets(start: number, end: number, period: Period, timeZone: string): TimelineBucket[] | null {
  const buckets: TimelineBucket[] = [];
  let day = bucketOf(start, period, timeZone);
  let from = startOfLocalDay(day, timeZone);
  while (from < end) {
    if (buckets.length === MAX_BUCKETS) return null;
    const next = NEXT[period](day);
    const until = startOfLocalDay(next, timeZone);
    buckets.push({ date: formatLocalDate(day), start: from, end: until });
    day = next;
    from = until;
  }
  return buckets;
}
