import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { asOfReads, type AsOfSources } from '../as-of.ts';

/** How far ahead of this process's clock an `as_of` may lie: a client's clock and the request's time on the wire. */
const CLOCK_SLACK_MS = 5_000;

/** What a cost read reads from: the live handle now, or the numbers as they stood at `as_of`. */
export interface ReadPoint {
  readonly ch: ClickHouse;
  /** "Now" for the answer: the request's time, or `as_of`. */
  readonly nowMs: number;
  readonly asOf: boolean;
}

/** The read point of a request's `as_of` (absent: now); one in the future is a 422 at it. */
export function readPointOf(ch: ClickHouse, sources: AsOfSources, asOf: Date | undefined, nowMs: number): ReadPoint {
  if (asOf === undefined) return { ch, nowMs, asOf: false };
  if (asOf.getTime() > nowMs + CLOCK_SLACK_MS)
    throw AppError.validation([
      {
        type: 'value_error',
        loc: ['query', 'as_of'],
        msg: 'Value error, as_of is in the future: the numbers are known up to now',
        input: asOf.toISOString(),
        ctx: { error: {} },
      },
    ]);
  return { ch: asOfReads(ch, sources, asOf.getTime()), nowMs: asOf.getTime(), asOf: true };
}
