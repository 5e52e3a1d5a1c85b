import { describe, expect, it } from 'vitest';
import { laxBool, laxDict, laxStr } from './lax-scalars.ts';
import { PyFloat, pyDictOf } from './py-value.ts';

describe('laxStr takes strings only', () => {
  it.each([5n, new PyFloat(1, '1.0'), true, null, [], new Map()])('refuses %o with string_type', (input) => {
    expect(laxStr(input)).toEqual({ ok: false, error: { type: 'string_type', msg: 'Input should be a valid string' } });
  });
});

describe('laxBool reads the words and numbers pydantic reads', () => {
  it.each<[unknown, boolean]>([
    ['yes', true],
    ['OFF', false],
    ['t', true],
    ['0', false],
    [1n, true],
    [new PyFloat(1, '1.0'), true],
    [new PyFloat(0, '0.0'), false],
  ])('%o is %s', (input, expected) => {
    expect(laxBool(input)).toEqual({ ok: true, value: expected });
  });

  it.each<[unknown, string]>([
    ['x', 'bool_parsing'],
    [2n, 'bool_parsing'],
    [new PyFloat(2, '2.0'), 'bool_parsing'],
    [new PyFloat(1.5, '1.5'), 'bool_type'],
    [123456789012345678901234567890n, 'bool_type'],
    [null, 'bool_type'],
  ])('refuses %o with %s', (input, type) => {
    expect(laxBool(input)).toMatchObject({ ok: false, error: { type } });
  });
});

describe('laxDict takes JSON objects and hands on plain JSON', () => {
  it('converts ints and floats to JS numbers', () => {
    expect(laxDict(pyDictOf({ a: 1n, b: new PyFloat(2.5, '2.5'), c: [pyDictOf({ d: null })] }))).toEqual({
      ok: true,
      value: { a: 1, b: 2.5, c: [{ d: null }] },
    });
  });

  it('keeps a "__proto__" key as data', () => {
    const result = laxDict(pyDictOf({ ['__proto__']: 'x' }));
    expect(result.ok && Object.getOwnPropertyDescriptor(result.value, '__proto__')?.value).toBe('x');
  });

  it.each(['abc', [], 5n, null])('refuses %o with dict_type', (input) => {
    expect(laxDict(input)).toEqual({
      ok: false,
      error: { type: 'dict_type', msg: 'Input should be a valid dictionary' },
    });
  });
});
