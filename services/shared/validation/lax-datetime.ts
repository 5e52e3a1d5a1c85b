import { laxFail, laxOk, parsingError, plainError, type Lax } from './pydantic-errors.ts';
import { PyFloat } from './py-value.ts';
import type { DateTimeParts, Parsed } from './speedate-errors.ts';
import { dateTimeFromFloat, dateTimeFromTimestamp, parseDateBytes, parseDateTimeBytes } from './speedate-timestamp.ts';

const I64_MIN = -9_223_372_036_854_775_808n;

/** The values parsed from text without an offset (a naive datetime or a bare date), read as UTC. */
const offsetless = new WeakSet<Date>();

/**
 * Whether this value came from text without an offset: its instant is the sender's local time read
 * as UTC, so it may lie up to the largest UTC offset ahead of the real one.
 */
export function hadNoOffset(date: Date): boolean {
  return offsetless.has(date);
}

const I64_MAX = 9_223_372_036_854_775_807n;

/**
 * pydantic's lax `datetime` (`input_python.rs` validate_datetime, `validators/datetime.rs`):
 * strings through speedate, falling back to a date at naive midnight whose parse error is the one
 * reported (datetime_from_date_parsing); ints and floats as unix timestamps (datetime_parsing
 * when out of range); bools and containers are datetime_type.
 *
 * The value is a JS `Date` (millisecond precision, microseconds truncated); a naive datetime
 * (no offset, or a bare date) is read as UTC.
 */
export function laxDatetime(input: unknown): Lax<Date> {
  if (typeof input === 'string') return fromString(input);
  if (typeof input === 'bigint') return fromInt(input);
  if (input instanceof PyFloat) return fromFloat(input.value);
  if (typeof input === 'number') return Number.isInteger(input) ? fromInt(BigInt(input)) : fromFloat(input);
  return laxFail(plainError('datetime_type'));
}

function fromString(text: string): Lax<Date> {
  const bytes = Buffer.from(text, 'utf8');
  const parsed = parseDateTimeBytes(bytes);
  if (parsed.ok) return marked(parsed.value);
  const date = parseDateBytes(bytes);
  if (!date.ok) return laxFail(parsingError('datetime_from_date_parsing', date.error));
  return marked({ ...date.value, hour: 0, minute: 0, second: 0, microsecond: 0, tzOffset: null });
}

function marked(parts: DateTimeParts): Lax<Date> {
  const result = toDate(parts);
  if (result.ok && parts.tzOffset === null) offsetless.add(result.value);
  return result;
}

/** Python ints outside i64 go through float(); past float range that raises and it is a type error. */
function fromInt(value: bigint): Lax<Date> {
  if (value >= I64_MIN && value <= I64_MAX) return checked(dateTimeFromTimestamp(value, 0));
  const asFloat = Number(value);
  return Number.isFinite(asFloat) ? fromFloat(asFloat) : laxFail(plainError('datetime_type'));
}

function fromFloat(value: number): Lax<Date> {
  if (Number.isNaN(value)) return laxFail(parsingError('datetime_parsing', 'NaN values not permitted'));
  return checked(dateTimeFromFloat(value));
}

function checked(parsed: Parsed<DateTimeParts>): Lax<Date> {
  return parsed.ok ? toDate(parsed.value) : laxFail(parsingError('datetime_parsing', parsed.error));
}

/** Python's `datetime` has no year 0, which speedate parses; building the object fails there. */
function toDate(parts: DateTimeParts): Lax<Date> {
  if (parts.year === 0) return laxFail(parsingError('datetime_parsing', 'year 0 is out of range'));
  const date = new Date(0);
  date.setUTCFullYear(parts.year, parts.month - 1, parts.day);
  date.setUTCHours(parts.hour, parts.minute, parts.second, Math.floor(parts.microsecond / 1000));
  return laxOk(new Date(date.getTime() - (parts.tzOffset ?? 0) * 1000));
}
