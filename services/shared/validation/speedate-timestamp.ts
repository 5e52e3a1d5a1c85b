import { parsedFail, parsedOk, SPEEDATE, type DateParts, type DateTimeParts, type Parsed } from './speedate-errors.ts';
import { parseDatePrefix, parseRfc3339DateTime } from './speedate-text.ts';

/**
 * speedate 0.17's number handling (`DateTime::parse_bytes_with_config`, `from_timestamp_with_
 * config`, `from_float_with_config`, `Date::parse_bytes_with_config`) with the "infer" unit:
 * a timestamp above 2e10 in absolute value is milliseconds. i64 arithmetic is done in bigint.
 */
const MS_WATERSHED = 20_000_000_000n;
const UNIX_9999 = 253_402_300_799n;
const UNIX_0000 = -62_167_219_200n;
const I64_MAX = 9_223_372_036_854_775_807n;
const I64_MIN = -9_223_372_036_854_775_808n;
const U32_MAX = 4_294_967_295;

/** Rust `f64 as i64`: saturating, NaN to 0. */
export function f64AsI64(x: number): bigint {
  if (Number.isNaN(x)) return 0n;
  if (x >= 2 ** 63) return I64_MAX;
  if (x <= -(2 ** 63)) return I64_MIN;
  return BigInt(Math.trunc(x));
}

/** Rust `f64 as u32`: saturating, NaN to 0. */
function f64AsU32(x: number): number {
  if (Number.isNaN(x) || x <= 0) return 0;
  return x >= U32_MAX ? U32_MAX : Math.trunc(x);
}

/** Rust `round`: half away from zero. */
const roundHalfAway = (x: number): number => Math.sign(x) * Math.round(Math.abs(x));

function watershed(timestamp: bigint): Parsed<[bigint, number]> {
  if (timestamp === I64_MIN) return parsedFail(SPEEDATE.dateTooSmall);
  const abs = timestamp < 0n ? -timestamp : timestamp;
  if (abs <= MS_WATERSHED) return parsedOk([timestamp, 0]);
  let seconds = timestamp / 1000n;
  let micros = Number(timestamp % 1000n) * 1000;
  if (micros < 0) {
    seconds -= 1n;
    micros += 1_000_000;
  }
  return parsedOk([seconds, micros]);
}

function dateFromSeconds(seconds: bigint): Parsed<[DateParts, number]> {
  if (seconds < UNIX_0000) return parsedFail(SPEEDATE.dateTooSmall);
  if (seconds > UNIX_9999) return parsedFail(SPEEDATE.dateTooLarge);
  const day = new Date(Number(seconds) * 1000);
  const rest = Number(((seconds % 86400n) + 86400n) % 86400n);
  return parsedOk([{ year: day.getUTCFullYear(), month: day.getUTCMonth() + 1, day: day.getUTCDate() }, rest]);
}

export function dateTimeFromTimestamp(timestamp: bigint, microsecond: number): Parsed<DateTimeParts> {
  const split = watershed(timestamp);
  if (!split.ok) return split;
  let [seconds, micros] = split.value;
  micros += microsecond;
  if (micros > U32_MAX) return parsedFail(SPEEDATE.timeTooLarge);
  if (micros >= 1_000_000) {
    seconds += BigInt(Math.floor(micros / 1_000_000));
    micros %= 1_000_000;
  }
  const date = dateFromSeconds(seconds);
  if (!date.ok) return date;
  const [parts, rest] = date.value;
  const time = { hour: Math.floor(rest / 3600), minute: Math.floor((rest % 3600) / 60), second: rest % 60 };
  return parsedOk({ ...parts, ...time, microsecond: micros, tzOffset: 0 });
}

/** A JSON float as a timestamp (`from_float_with_config`). */
export function dateTimeFromFloat(x: number): Parsed<DateTimeParts> {
  const fraction = Math.abs(x - Math.trunc(x));
  const micros = Math.abs(x) <= 20_000_000_000 ? fraction * 1_000_000 : fraction * 1_000;
  return dateTimeFromTimestamp(f64AsI64(Math.floor(x)), f64AsU32(roundHalfAway(micros)));
}

/** speedate `int_parse_bytes_internal`: the i64, or the byte that stopped it (null: empty). */
function intParse(bytes: Uint8Array): { readonly value: bigint } | { readonly stop: number | null } {
  if (bytes.length === 0) return { stop: null };
  const negative = bytes[0] === 0x2d && bytes.length >= 2;
  let i = negative || (bytes[0] === 0x2b && bytes.length >= 2) ? 1 : 0;
  let value = 0n;
  for (; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (b < 0x30 || b > 0x39) return { stop: b };
    value = value * 10n + BigInt(b - 0x30);
    if (value > I64_MAX) return { stop: b };
  }
  return { value: negative ? -value : value };
}

const LEXICAL_FLOAT = /^[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?$/;

/** A string: RFC 3339 first, then an int or float timestamp. */
export function parseDateTimeBytes(bytes: Uint8Array): Parsed<DateTimeParts> {
  const rfc = parseRfc3339DateTime(bytes);
  if (rfc.ok) return rfc;
  const int = intParse(bytes);
  if ('value' in int) return dateTimeFromTimestamp(int.value, 0);
  const text = new TextDecoder().decode(bytes);
  if (int.stop !== 0x2e || !LEXICAL_FLOAT.test(text)) return rfc;
  const float = Number(text);
  const inMs = Math.abs(float) > 20_000_000_000;
  const normalized = inMs ? float / 1000 : float;
  const seconds = f64AsI64(Math.floor(normalized));
  const micros = f64AsU32(roundHalfAway((normalized - Number(seconds)) * 1_000_000));
  return dateTimeFromTimestamp(seconds, micros);
}

/** `Date::parse_bytes_with_config`: exactly ten bytes of date, or a timestamp of a whole day. */
export function parseDateBytes(bytes: Uint8Array): Parsed<DateParts> {
  let result = parseDatePrefix(bytes);
  if (result.ok && bytes.length > 10) result = parsedFail(SPEEDATE.extraCharacters);
  if (result.ok) return result;
  const int = intParse(bytes);
  if (!('value' in int)) return result;
  const split = watershed(int.value);
  if (!split.ok) return split;
  const date = dateFromSeconds(split.value[0]);
  if (!date.ok) return date;
  if (date.value[1] !== 0 || split.value[1] !== 0) return parsedFail(SPEEDATE.dateNotExact);
  return parsedOk(date.value[0]);
}
