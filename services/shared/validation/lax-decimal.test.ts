import { describe, expect, it } from 'vitest';
import { formatDecimal } from './decimal-text.ts';
import { decimalBoundsCheck, laxDecimal } from './lax-decimal.ts';
import { PyFloat } from './py-value.ts';

const float = (text: string): PyFloat => new PyFloat(Number(text), text);

function decimalText(input: unknown): string | undefined {
  const result = laxDecimal(input);
  return result.ok ? formatDecimal(result.value) : undefined;
}

describe('laxDecimal coerces as pydantic lax Decimal does, keeping the exact text', () => {
  it.each<[unknown, string]>([
    [float('0.1'), '0.1'],
    [float('0.30000000000000000001'), '0.30000000000000000001'],
    [float('1e3'), '1000'],
    [float('1E+2'), '100'],
    [float('-1e-7'), '-0.0000001'],
    [float('-0.0'), '0'],
    [100000000000000000000000000000n, '100000000000000000000000000000'],
    ['2.5', '2.5'],
    ['0.10', '0.1'],
    [' 1.5 ', '1.5'],
    ['\u00a01\u00a0', '1'],
    ['1_000', '1000'],
    ['_1_', '1'],
    [' _1', '1'],
    ['.5', '0.5'],
    ['5.', '5'],
    ['+.5e-3', '0.0005'],
    ['١٢', '12'],
    ['𝟏𝟐', '12'],
    ['1e-1000000', '1E-1000000'],
    ['1e999999999999999999', '1E+999999999999999999'],
  ])('accepts %o as %s', (input, expected) => {
    expect(decimalText(input)).toBe(expected);
  });

  it.each<[unknown, string]>([
    ['lots', 'decimal_parsing'],
    ['', 'decimal_parsing'],
    ['_', 'decimal_parsing'],
    ['1 0', 'decimal_parsing'],
    ['_ 1', 'decimal_parsing'],
    ['1e', 'decimal_parsing'],
    ['1.2.3', 'decimal_parsing'],
    ['1\u0000', 'decimal_parsing'],
    ['\ufeff5', 'decimal_parsing'],
    ['1e-9999999999999999999', 'decimal_parsing'],
    ['0e999999999999999999999', 'decimal_parsing'],
    ['Infinity', 'finite_number'],
    ['-infinity', 'finite_number'],
    ['Inf', 'finite_number'],
    ['nan', 'finite_number'],
    ['sNaN', 'finite_number'],
    ['NaN123', 'finite_number'],
    [float('NaN'), 'finite_number'],
    [float('Infinity'), 'finite_number'],
    [float('1e400'), 'finite_number'],
    [null, 'decimal_type'],
    [true, 'decimal_type'],
    [[1n], 'decimal_type'],
    [new Map(), 'decimal_type'],
  ])('refuses %o with %s', (input, type) => {
    expect(laxDecimal(input)).toMatchObject({ ok: false, error: { type } });
  });
});

describe('decimalBoundsCheck compares exactly, whatever the exponent', () => {
  const check = (text: string, bounds: Parameters<typeof decimalBoundsCheck>[0]) => {
    const parsed = laxDecimal(text);
    if (!parsed.ok) throw new Error(text);
    return decimalBoundsCheck(bounds)(parsed.value);
  };

  it('refuses a negative value under ge=0 with pydantic greater_than_equal', () => {
    expect(check('-1e-999999999999999999', { minimum: 0 })).toEqual({
      ok: false,
      error: { type: 'greater_than_equal', msg: 'Input should be greater than or equal to 0', ctx: { ge: 0 } },
    });
  });

  it('accepts zero and -0 under ge=0, and compares across exponents', () => {
    expect(check('-0.0', { minimum: 0 })).toEqual({ ok: true, value: '0' });
    expect(check('0.30000000000000000001', { exclusiveMinimum: 0.3 })).toEqual({
      ok: true,
      value: '0.30000000000000000001',
    });
    expect(check('2e3', { maximum: 1999.5 })).toMatchObject({
      ok: false,
      error: { type: 'less_than_equal', ctx: { le: 1999.5 } },
    });
  });
});
