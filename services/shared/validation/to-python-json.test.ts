import { describe, expect, it } from 'vitest';
import { formatPyFloat } from './python-float-repr.ts';
import { PyFloat, pyDictOf } from './py-value.ts';
import { toPythonJson } from './to-python-json.ts';

describe('formatPyFloat writes floats as Python repr does', () => {
  it.each([
    [2, '2.0'],
    [1e16, '1e+16'],
    [1e15, '1000000000000000.0'],
    [1.5e-7, '1.5e-07'],
    [0.0001, '0.0001'],
    [0.00001, '1e-05'],
    [0.1, '0.1'],
    [-0, '-0.0'],
    [0, '0.0'],
    [123456789.125, '123456789.125'],
    [1.7976931348623157e308, '1.7976931348623157e+308'],
    [5e-324, '5e-324'],
    [9.3e18, '9.3e+18'],
    [Number.POSITIVE_INFINITY, 'Infinity'],
    [Number.NEGATIVE_INFINITY, '-Infinity'],
    [Number.NaN, 'NaN'],
  ])('%d is %s', (value, text) => {
    expect(formatPyFloat(value)).toBe(text);
  });
});

describe('toPythonJson matches json.dumps(ensure_ascii=False, separators=(",", ":"))', () => {
  it('writes Python floats, exact ints and compact containers', () => {
    const value = pyDictOf({ a: new PyFloat(1, '1.0'), b: 123456789012345678901234567890n, c: [true, false, null] });
    expect(toPythonJson(value)).toBe('{"a":1.0,"b":123456789012345678901234567890,"c":[true,false,null]}');
  });

  it('writes JS integers as ints, as error contexts hold them', () => {
    expect(toPythonJson({ ge: 0, le: 9007199254740991, half: 0.5 })).toBe('{"ge":0,"le":9007199254740991,"half":0.5}');
  });

  it('keeps non-ASCII text raw and escapes only quotes, backslashes and control characters', () => {
    expect(toPythonJson('é😀"\\\n\t\u0001\u007f\u2028')).toBe('"é😀\\"\\\\\\n\\t\\u0001\u007f\u2028"');
  });

  it('keeps the insertion order of a PyDict', () => {
    expect(
      toPythonJson(
        new Map([
          ['2', 1n],
          ['1', 2n],
        ]),
      ),
    ).toBe('{"2":1,"1":2}');
  });
});
