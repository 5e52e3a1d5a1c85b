import { describe, expect, it } from 'vitest';
import { laxInt } from './lax-int.ts';
import { PyFloat } from './py-value.ts';

const float = (text: string): PyFloat => new PyFloat(Number(text), text);

describe('laxInt coerces as pydantic lax int does', () => {
  it.each<[unknown, bigint]>([
    [5n, 5n],
    [true, 1n],
    [false, 0n],
    [float('5.0'), 5n],
    [float('-0.0'), 0n],
    [float('9.2e18'), 9200000000000000000n],
    ['5', 5n],
    [' 12 ', 12n],
    ['\t5\n', 5n],
    ['\u00a05', 5n],
    ['+5', 5n],
    ['-0', 0n],
    ['00012', 12n],
    ['-00012', -12n],
    ['1_000', 1000n],
    ['0_0', 0n],
    ['5.0', 5n],
    ['1_0.0', 10n],
    ['0.000', 0n],
    ['123456789012345678901234567890', 123456789012345678901234567890n],
  ])('accepts %o as %s', (input, expected) => {
    expect(laxInt(input)).toEqual({ ok: true, value: expected });
  });

  it.each<[unknown, string]>([
    ['1.5', 'int_parsing'],
    ['abc', 'int_parsing'],
    ['', 'int_parsing'],
    ['5a', 'int_parsing'],
    ['1e3', 'int_parsing'],
    ['0x10', 'int_parsing'],
    ['+-1', 'int_parsing'],
    ['_1', 'int_parsing'],
    ['1__0', 'int_parsing'],
    ['-', 'int_parsing'],
    ['\u001c5', 'int_parsing'],
    ['\ufeff5', 'int_parsing'],
    ['١٢', 'int_parsing'],
    [`1${'0'.repeat(4300)}`, 'int_parsing_size'],
    [float('1.5'), 'int_from_float'],
    [float('1e20'), 'int_parsing_size'],
    [float('9.3e18'), 'int_parsing_size'],
    [float('Infinity'), 'finite_number'],
    [float('NaN'), 'finite_number'],
    [null, 'int_type'],
    [[], 'int_type'],
    [new Map(), 'int_type'],
  ])('refuses %o with %s', (input, type) => {
    expect(laxInt(input)).toMatchObject({ ok: false, error: { type } });
  });
});
