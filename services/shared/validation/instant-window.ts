import type { ValidationItem } from '../errors.ts';

/** How far ahead of the server's clock a client's instant may lie: its clock may run fast, not by hours. */
export const FUTURE_TOLERANCE_MS = 5 * 60_000;

const DAY_MS = 86_400_000;

/**
 * The largest offset of a local time ahead of UTC (UTC+14): an instant sent without an offset (a
 * local datetime or date read as UTC) may lie this far ahead of the real one.
 */
export const MAX_UTC_OFFSET_MS = 14 * 3_600_000;

/** The latest instant the DateTime64(3) columns hold: a later one would be stored as another instant. */
export const LATEST_STORED_MS = Date.UTC(2299, 11, 31, 23, 59, 59, 999);

/**
 * The instants a client reports about something that happened (a usage event's `timestamp`, a call's
 * `ended_at`) lie between maxAgeMs before now (USAGE_MAX_AGE_DAYS) and FUTURE_TOLERANCE_MS after it.
 * Without the bound an end in the year 9999 kept a session taking usage for ever and computed a
 * duration no column holds.
 */
export interface InstantWindow {
  readonly nowMs: number;
  readonly maxAgeMs: number;
}

/**
 * The 422 item of an instant outside the window, at `["body", field]`, or null. `pastReason` ends the
 * message of one too old (why that field refuses the past).
 */
export function instantOutsideWindow(
  field: string,
  atMs: number,
  input: unknown,
  { nowMs, maxAgeMs }: InstantWindow,
  pastReason = '',
  futureSlackMs = 0,
): ValidationItem | null {
  if (atMs > nowMs + FUTURE_TOLERANCE_MS + futureSlackMs)
    return valueError(field, `${field} is more than 5 minutes in the future`, input);
  if (atMs < nowMs - maxAgeMs)
    return valueError(field, `${field} is more than ${maxAgeMs / DAY_MS} days in the past${pastReason}`, input);
  return null;
}

function valueError(field: string, message: string, input: unknown): ValidationItem {
  return { type: 'value_error', loc: ['body', field], msg: `Value error, ${message}`, input, ctx: { error: {} } };
}
