import { parsedFail, parsedOk, SPEEDATE, type DateParts, type DateTimeParts, type Parsed } from './speedate-errors.ts';

/**
 * speedate 0.17's RFC 3339-ish parsers (`Date::parse_bytes_partial`, `DateTime::
 * parse_bytes_rfc3339_with_config`, `PureTime::parse`, `Time::parse_bytes_offset`), byte for
 * byte, because pydantic reports the first check that fails and each check has its own text.
 */
const isDigit = (b: number | undefined): b is number => b !== undefined && b >= 0x30 && b <= 0x39;

function digits(bytes: Uint8Array, at: number, count: number): number | undefined {
  let value = 0;
  for (let k = 0; k < count; k++) {
    const b = bytes[at + k];
    if (!isDigit(b)) return undefined;
    value = value * 10 + (b - 0x30);
  }
  return value;
}

export function parseDatePrefix(bytes: Uint8Array): Parsed<DateParts> {
  if (bytes.length < 10) return parsedFail(SPEEDATE.tooShort);
  const year = digits(bytes, 0, 4);
  if (year === undefined) return parsedFail(SPEEDATE.year);
  if (bytes[4] !== 0x2d) return parsedFail(SPEEDATE.dateSep);
  const month = digits(bytes, 5, 2);
  if (month === undefined) return parsedFail(SPEEDATE.month);
  if (bytes[7] !== 0x2d) return parsedFail(SPEEDATE.dateSep);
  const day = digits(bytes, 8, 2);
  if (day === undefined) return parsedFail(SPEEDATE.day);
  if (month < 1 || month > 12) return parsedFail(SPEEDATE.monthRange);
  if (day < 1 || day > daysInMonth(year, month)) return parsedFail(SPEEDATE.dayRange);
  return parsedOk({ year, month, day });
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

export function parseRfc3339DateTime(bytes: Uint8Array): Parsed<DateTimeParts> {
  const date = parseDatePrefix(bytes);
  if (!date.ok) return date;
  const sep = bytes[10];
  if (sep !== 0x54 && sep !== 0x74 && sep !== 0x20 && sep !== 0x5f) return parsedFail(SPEEDATE.dateTimeSep);
  const time = parseTime(bytes, 11);
  if (!time.ok) return time;
  const zone = parseOffset(bytes, time.value.position);
  if (!zone.ok) return zone;
  const { year, month, day } = date.value;
  const { hour, minute, second, microsecond } = time.value;
  return parsedOk({ year, month, day, hour, minute, second, microsecond, tzOffset: zone.value });
}

interface PureTime {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly microsecond: number;
  readonly position: number;
}

function parseTime(bytes: Uint8Array, offset: number): Parsed<PureTime> {
  if (bytes.length - offset < 5) return parsedFail(SPEEDATE.tooShort);
  const hour = digits(bytes, offset, 2);
  if (hour === undefined) return parsedFail(SPEEDATE.hour);
  if (bytes[offset + 2] !== 0x3a) return parsedFail(SPEEDATE.timeSep);
  const minute = digits(bytes, offset + 3, 2);
  if (minute === undefined) return parsedFail(SPEEDATE.minute);
  if (hour > 23) return parsedFail(SPEEDATE.hourRange);
  if (minute > 59) return parsedFail(SPEEDATE.minuteRange);
  if (bytes[offset + 5] !== 0x3a) return parsedOk({ hour, minute, second: 0, microsecond: 0, position: offset + 5 });
  const second = digits(bytes, offset + 6, 2);
  if (second === undefined) return parsedFail(SPEEDATE.second);
  if (second > 59) return parsedFail(SPEEDATE.secondRange);
  const fracSep = bytes[offset + 8];
  if (fracSep !== 0x2e && fracSep !== 0x2c)
    return parsedOk({ hour, minute, second, microsecond: 0, position: offset + 8 });
  // microseconds_precision defaults to "truncate": digits past the sixth are read and dropped
  let count = 0;
  let microsecond = 0;
  while (isDigit(bytes[offset + 9 + count])) {
    if (count < 6) microsecond = microsecond * 10 + (bytes[offset + 9 + count]! - 0x30);
    count++;
  }
  if (count === 0) return parsedFail(SPEEDATE.fractionMissing);
  if (count < 6) microsecond *= 10 ** (6 - count);
  return parsedOk({ hour, minute, second, microsecond, position: offset + 9 + count });
}

/** `Z`, `z`, `±HH:MM`, `±HHMM` or U+2212 MINUS SIGN; nothing may follow. */
function parseOffset(bytes: Uint8Array, start: number): Parsed<number | null> {
  let position = start;
  let offset: number | null = null;
  const next = bytes[position];
  if (next !== undefined) {
    position += 1;
    if (next === 0x5a || next === 0x7a) offset = 0;
    else {
      const signed = parseSignedOffset(bytes, next, position);
      if (!signed.ok) return signed;
      [offset, position] = signed.value;
    }
  }
  return bytes.length > position ? parsedFail(SPEEDATE.extraCharacters) : parsedOk(offset);
}

function parseSignedOffset(bytes: Uint8Array, signByte: number, at: number): Parsed<[number, number]> {
  let position = at;
  let sign: number;
  if (signByte === 0x2b) sign = 1;
  else if (signByte === 0x2d) sign = -1;
  else if (signByte === 226 && bytes[position] === 136 && bytes[position + 1] === 146) {
    sign = -1;
    position += 2;
  } else return parsedFail(SPEEDATE.tzSign);
  const hours = digits(bytes, position, 2);
  if (hours === undefined) return parsedFail(SPEEDATE.tzHour);
  const third = bytes[position + 2];
  if (third === 0x3a) position += 3;
  else if (isDigit(third)) position += 2;
  else return parsedFail(SPEEDATE.tzMinute);
  const minutes = digits(bytes, position, 2);
  if (minutes === undefined) return parsedFail(SPEEDATE.tzMinute);
  if (minutes >= 60) return parsedFail(SPEEDATE.tzMinuteRange);
  const offset = sign * (hours * 3600 + minutes * 60);
  if (Math.abs(offset) >= 24 * 3600) return parsedFail(SPEEDATE.tzRange);
  return parsedOk([offset, position + 2]);
}
