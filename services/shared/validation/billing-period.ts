import { PERIOD_PATTERN } from '../../../schemas/http/periods.ts';
import { AppError } from '../errors.ts';

/** The first instant of a `YYYY-MM` month in UTC, and of the month after it (epoch ms). */
export function monthBounds(period: string): { start: number; end: number } {
  const [year, month] = period.split('-').map(Number) as [number, number];
  return { start: Date.UTC(year, month - 1, 1), end: Date.UTC(year, month, 1) };
}

/** The `YYYY-MM` month (UTC) an instant lies in. */
export function periodOf(instantMs: number): string {
  return new Date(instantMs).toISOString().slice(0, 7);
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
