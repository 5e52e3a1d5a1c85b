import type { PyCheck } from '../../../schemas/dialect/schema-dialect.ts';
import { parsingError, type PyError } from './pydantic-errors.ts';
import { parseDateBytes, parseDateTimeBytes } from './speedate-timestamp.ts';

export type { PyCheck };

/**
 * Field validators (pydantic's `field_validator`) that the dialect names with `x-py-check`. They
 * run during request validation, so their errors are collected with every other field's, in field
 * order, before the 401 of a missing x-user-id, as the replaced service validated its query first.
 * Each sees the value after its `x-py` coercion; an empty string is absent (the dashboard sends
 * `start_date=` when no date is picked), so the check lets it through.
 */

export const PY_CHECKS: Readonly<Record<PyCheck, (value: string) => PyError | null>> = {
  'time-zone': (value) =>
    isIanaTimeZone(value)
      ? null
      : {
          type: 'value_error',
          msg: `Value error, unknown time zone '${value}': use an IANA name such as 'Asia/Kolkata'`,
          ctx: { error: {} },
        },
  'date-or-datetime': dateOrDateTimeError,
};

/** Names found valid: building a formatter costs about 0.3 ms, and a tenant names the same few zones. */
const knownZones = new Set<string>();
const KNOWN_ZONES_KEPT = 1_000;

export function isIanaTimeZone(name: string): boolean {
  if (knownZones.has(name)) return true;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: name });
  } catch {
    return false;
  }
  if (knownZones.size < KNOWN_ZONES_KEPT) knownZones.add(name);
  return true;
}

/** pydantic's `datetime` parse of a string, which also takes a bare date; year 0 is out of range. */
function dateOrDateTimeError(value: string): PyError | null {
  const bytes = Buffer.from(value, 'utf8');
  const dateTime = parseDateTimeBytes(bytes);
  if (dateTime.ok && dateTime.value.year !== 0) return null;
  const date = parseDateBytes(bytes);
  if (date.ok && date.value.year !== 0) return null;
  return parsingError('datetime_from_date_parsing', date.ok ? 'year 0 is out of range' : date.error);
}
