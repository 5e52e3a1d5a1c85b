import { PERIOD_PATTERN } from '../../../schemas/http/periods.ts';
import { AppError } from '../errors.ts';
import { stringLengthError } from './pydantic-errors.ts';
import { addMonths, localDate, startOfLocalDay } from '../zoned-time.ts';

/** The first instant of a `YYYY-MM` month in the tenant's time zone, and of the month after it (epoch ms). */
export function monthBounds(period: string, timeZone = 'UTC'): { start: number; end: number } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  const first = { year, month, day: 1 };
  return { start: startOfLocalDay(first, timeZone), end: startOfLocalDay(addMonths(first, 1), timeZone) };
}

/** The `YYYY-MM` month an instant lies in, in the tenant's time zone. */
export function periodOf(instantMs: number, timeZone = 'UTC'): string {
  const { year, month } = localDate(instantMs, timeZone);
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}`;
}

/** The month `offset` months after (or, negative, before) a `YYYY-MM` month. */
export function shiftPeriod(period: string, offset: number): string {
  const [year, month] = period.split('-').map(Number) as [number, number];
  const moved = addMonths({ year, month, day: 1 }, offset);
  return `${String(moved.year).padStart(4, '0')}-${String(moved.month).padStart(2, '0')}`;
}

/** A `YYYY-MM` path segment, else pydantic's pattern 422 at it. */
export function assertPeriod(period: string): void {
  if (new RegExp(PERIOD_PATTERN).test(period)) return;
  throw AppError.validation([
    {
      type: 'string_pattern_mismatch',
      loc: ['path', 'period'],
      msg: `String should match pattern '${PERIOD_PATTERN}'`,
      input: period,
      ctx: { pattern: PERIOD_PATTERN },
    },
  ]);
}

/** The longest tenant id a record holds: 512 characters, as every user_id field of a body. */
export const MAX_TENANT_ID_LENGTH = 512;

/**
 * A `{user_id}` path segment a record is written for: at most 512 characters (counted as pydantic counts,
 * by code point), else pydantic's string_too_long 422 at it.
 */
export function assertTenantPath(userId: string): void {
  if ([...userId].length <= MAX_TENANT_ID_LENGTH) return;
  throw AppError.validation([
    { ...stringLengthError('long', MAX_TENANT_ID_LENGTH), loc: ['path', 'user_id'], input: userId },
  ]);
}
