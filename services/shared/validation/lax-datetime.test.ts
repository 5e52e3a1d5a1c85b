import { describe, expect, it } from 'vitest';
import { hadNoOffset, laxDatetime } from './lax-datetime.ts';
import { PyFloat } from './py-value.ts';

const float = (text: string): PyFloat => new PyFloat(Number(text), text);
const iso = (input: unknown): string | undefined => {
  const result = laxDatetime(input);
  return result.ok ? result.value.toISOString() : undefined;
};

describe('laxDatetime accepts what pydantic lax datetime accepts', () => {
  it.each<[unknown, string]>([
    ['2026-01-01T00:00:00Z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01t00:00:00z', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01 10:00:00+05:30', '2026-01-01T04:30:00.000Z'],
    ['2026-01-01_10:00:00-0800', '2026-01-01T18:00:00.000Z'],
    ['2026-01-01T00:00:00\u221205:00', '2026-01-01T05:00:00.000Z'],
    ['2026-01-01T00:00', '2026-01-01T00:00:00.000Z'],
    ['2026-01-01T00:00:00,5', '2026-01-01T00:00:00.500Z'],
    ['2026-01-01T00:00:00.1234567Z', '2026-01-01T00:00:00.123Z'],
    ['2026-01-01', '2026-01-01T00:00:00.000Z'],
    ['0001-01-01T00:00:00+05:00', '0000-12-31T19:00:00.000Z'],
    [1767225600n, '2026-01-01T00:00:00.000Z'],
    ['1767225600', '2026-01-01T00:00:00.000Z'],
    [float('1767225600.5'), '2026-01-01T00:00:00.500Z'],
    ['1700000000000', '2023-11-14T22:13:20.000Z'],
    ['20260101', '1970-08-23T11:48:21.000Z'],
    ['.5', '1970-01-01T00:00:00.500Z'],
    ['-1.5', '1969-12-31T23:59:58.500Z'],
    ['1.5e3', '1970-01-01T00:25:00.000Z'],
    ['-62167219201', '1968-01-12T11:19:40.799Z'],
    [float('253402300799999'), '9999-12-31T23:59:59.999Z'],
  ])('%o is %s', (input, expected) => {
    expect(iso(input)).toBe(expected);
  });
});

describe('laxDatetime refuses with speedate 0.17 texts', () => {
  it.each<[unknown, string, string]>([
    ['not-a-date', 'datetime_from_date_parsing', 'invalid character in year'],
    ['', 'datetime_from_date_parsing', 'input is too short'],
    ['2026-1-01', 'datetime_from_date_parsing', 'input is too short'],
    ['2026/01/01', 'datetime_from_date_parsing', 'invalid date separator, expected `-`'],
    ['2026-0a-01', 'datetime_from_date_parsing', 'invalid character in month'],
    ['2026-01-0a', 'datetime_from_date_parsing', 'invalid character in day'],
    ['2026-13-01', 'datetime_from_date_parsing', 'month value is outside expected range of 1-12'],
    ['2026-02-29', 'datetime_from_date_parsing', 'day value is outside expected range'],
    ['2026-01-01T25:00:00Z', 'datetime_from_date_parsing', 'unexpected extra characters at the end of the input'],
    ['2026-01-01T00:00:00+05', 'datetime_from_date_parsing', 'unexpected extra characters at the end of the input'],
    ['99999999999999999999', 'datetime_from_date_parsing', 'invalid date separator, expected `-`'],
    ['0000-01-01', 'datetime_parsing', 'year 0 is out of range'],
    [float('1e20'), 'datetime_parsing', 'dates after 9999 are not supported as unix timestamps'],
    [float('-1e20'), 'datetime_parsing', 'dates before 0000 are not supported as unix timestamps'],
    [12345678901234567890123n, 'datetime_parsing', 'dates after 9999 are not supported as unix timestamps'],
    [float('NaN'), 'datetime_parsing', 'NaN values not permitted'],
  ])('%o is %s: %s', (input, type, error) => {
    expect(laxDatetime(input)).toMatchObject({ ok: false, error: { type, ctx: { error } } });
  });

  it.each([true, false, null, [1n], new Map()])('refuses %o with datetime_type', (input) => {
    expect(laxDatetime(input)).toEqual({
      ok: false,
      error: { type: 'datetime_type', msg: 'Input should be a valid datetime' },
    });
  });
});

describe('hadNoOffset', () => {
  it('marks a naive datetime and a bare date, and neither one with an offset nor a timestamp', () => {
    const value = (input: unknown) => {
      const result = laxDatetime(input);
      if (!result.ok) throw new Error('not parsed');
      return result.value;
    };
    expect(hadNoOffset(value('2026-11-23'))).toBe(true);
    expect(hadNoOffset(value('2026-11-23T09:00:00'))).toBe(true);
    expect(hadNoOffset(value('2026-11-23T09:00:00Z'))).toBe(false);
    expect(hadNoOffset(value('2026-11-23T09:00:00+14:00'))).toBe(false);
    expect(hadNoOffset(value(1_795_000_000))).toBe(false);
  });
});
