import fc from 'fast-check';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { describe, expect, it } from 'vitest';
import { dateTimeFormat } from './date-time-format.ts';

const full = (fullFormats['date-time'] as { validate: (text: string) => boolean }).validate;
const check = (dateTimeFormat as { validate: (text: string) => boolean }).validate;

/** toISOString's form with any digits in any field: valid dates, 30 February, hour 24, second 60. */
const isoShaped = fc
  .tuple(
    fc.integer({ min: 0, max: 9999 }),
    fc.integer({ min: 0, max: 13 }),
    fc.integer({ min: 0, max: 32 }),
    fc.integer({ min: 0, max: 25 }),
    fc.integer({ min: 0, max: 61 }),
    fc.integer({ min: 0, max: 61 }),
    fc.integer({ min: 0, max: 999 }),
  )
  .map(
    ([year, month, day, hour, minute, second, ms]) =>
      `${String(year).padStart(4, '0')}-${pad(month)}-${pad(day)}T${pad(hour)}:${pad(minute)}:${pad(second)}.${String(ms).padStart(3, '0')}Z`,
  );
const pad = (value: number) => String(value).padStart(2, '0');

describe('the date-time format of records', () => {
  it("gives ajv-formats' verdict for every string of toISOString's shape, valid or not", () => {
    fc.assert(
      fc.property(isoShaped, (text) => check(text) === full(text)),
      { numRuns: 5000 },
    );
  });

  it("gives ajv-formats' verdict for one character changed anywhere", () => {
    const changed = fc
      .tuple(fc.date({ noInvalidDate: true }), fc.nat(23), fc.constantFrom(...'0123456789-:.TtZz +x\u0000'))
      .map(([date, at, char]) => {
        const text = date.toISOString().padStart(24, '0').slice(-24);
        return text.slice(0, at) + char + text.slice(at + 1);
      });
    fc.assert(
      fc.property(changed, (text) => check(text) === full(text)),
      { numRuns: 5000 },
    );
  });

  it('accepts every toISOString of a four-digit year, and what only the full check knows', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0000-01-01T00:00:00Z'),
          max: new Date('9999-12-31T23:59:59.999Z'),
          noInvalidDate: true,
        }),
        (date) => check(date.toISOString()),
      ),
    );
    for (const text of ['2024-02-29T10:00:00Z', '2024-02-29t10:00:00.5+02:00', '2016-12-31T23:59:60Z'])
      expect(check(text)).toBe(true);
    for (const text of ['2023-02-29T10:00:00.000Z', '2024-01-01T10:00:00.000', '2024-01-01', ''])
      expect(check(text)).toBe(false);
  });
});
