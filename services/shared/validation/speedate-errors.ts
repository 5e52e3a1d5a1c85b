/** speedate 0.17 `ParseError` doc strings: pydantic puts them in `ctx.error` verbatim. */
export const SPEEDATE = {
  tooShort: 'input is too short',
  extraCharacters: 'unexpected extra characters at the end of the input',
  dateTimeSep: 'invalid datetime separator, expected `T`, `t`, `_` or space',
  dateSep: 'invalid date separator, expected `-`',
  dateNotExact: 'Timestamp is not an exact date',
  year: 'invalid character in year',
  month: 'invalid character in month',
  day: 'invalid character in day',
  timeSep: 'invalid time separator, expected `:`',
  hour: 'invalid character in hour',
  minute: 'invalid character in minute',
  second: 'invalid character in second',
  tzSign: 'invalid timezone sign',
  tzHour: 'invalid timezone hour',
  tzMinute: 'invalid timezone minute',
  tzMinuteRange: 'timezone minute value is outside expected range of 0-59',
  tzRange: 'timezone offset must be less than 24 hours',
  monthRange: 'month value is outside expected range of 1-12',
  dayRange: 'day value is outside expected range',
  hourRange: 'hour value is outside expected range of 0-23',
  minuteRange: 'minute value is outside expected range of 0-59',
  secondRange: 'second value is outside expected range of 0-59',
  fractionMissing: 'second fraction digits missing after `.`',
  dateTooSmall: 'dates before 0000 are not supported as unix timestamps',
  dateTooLarge: 'dates after 9999 are not supported as unix timestamps',
  timeTooLarge: 'numeric times may not exceed 86,399 seconds',
} as const;

export interface DateParts {
  readonly year: number;
  readonly month: number;
  readonly day: number;
}

export interface DateTimeParts extends DateParts {
  readonly hour: number;
  readonly minute: number;
  readonly second: number;
  readonly microsecond: number;
  /** Seconds east of UTC; null for a naive datetime. */
  readonly tzOffset: number | null;
}

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

export const parsedOk = <T>(value: T): Parsed<T> => ({ ok: true, value });
export const parsedFail = (error: string): Parsed<never> => ({ ok: false, error });
