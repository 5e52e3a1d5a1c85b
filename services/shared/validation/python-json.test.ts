import { describe, expect, it } from 'vitest';
import { parsePythonJson, MAX_DEPTH } from './python-json.ts';
import { PyFloat } from './py-value.ts';
import { toPythonJson } from './to-python-json.ts';

describe('parsePythonJson reports what CPython 3.11 json.loads reports', () => {
  // fastapi-compat.md "Python json.loads messages", then further cases run against CPython 3.11.7
  const vectors: readonly [string, string, number][] = [
    ['{some broken json}', 'Expecting property name enclosed in double quotes', 1],
    ['   ', 'Expecting value', 3],
    ['abc', 'Expecting value', 0],
    ['{"a":}', 'Expecting value', 5],
    ['{"a":tru}', 'Expecting value', 5],
    ['{"a" 1}', "Expecting ':' delimiter", 5],
    ['{"a":1 "b":2}', "Expecting ',' delimiter", 7],
    ['[1 2]', "Expecting ',' delimiter", 3],
    ['{"a":1}x', 'Extra data', 7],
    ['{"a":"abc', 'Unterminated string starting at', 5],
    ['{"a":"x\ty"}', 'Invalid control character at', 7],
    ['{"a":"\\q"}', 'Invalid \\escape', 6],
    ['{"a":"\\u12"}', 'Invalid \\uXXXX escape', 7],
    ['{', 'Expecting property name enclosed in double quotes', 1],
    ["{'a':1}", 'Expecting property name enclosed in double quotes', 1],
    ['{"a":1,}', 'Expecting property name enclosed in double quotes', 7],
    ['[1,2,]', 'Expecting value', 5],
    ['-', 'Expecting value', 0],
    ['-Inf', 'Expecting value', 0],
    ['01', 'Extra data', 1],
    ['[01]', "Expecting ',' delimiter", 2],
    ['1e5x', 'Extra data', 3],
    ['NaNx', 'Extra data', 3],
    ['"\\u12', 'Invalid \\uXXXX escape', 2],
    ['"\\u1234', 'Invalid \\uXXXX escape', 2],
    ['"\\ud800\\u12"', 'Invalid \\uXXXX escape', 8],
    ['"\\', 'Unterminated string starting at', 0],
    // a second BOM after the one the bytes decoder strips
    ['\ufeff{}', 'Expecting value', 0],
    ['["é😀", x]', 'Expecting value', 7],
  ];

  it.each(vectors)('%j fails with "%s" at %i', (text, msg, pos) => {
    expect(parsePythonJson(text)).toEqual({ ok: false, kind: 'decode', msg, pos });
  });

  it('counts positions in code points, not UTF-16 units', () => {
    expect(parsePythonJson('"😀😀" x')).toMatchObject({ msg: 'Extra data', pos: 5 });
  });
});

describe('parsePythonJson keeps the values pydantic distinguishes', () => {
  it('reads an integer as a bigint and a number with a fraction or exponent as a PyFloat', () => {
    const parsed = parsePythonJson('[5, 5.0, 1e3, -0, 123456789012345678901234567890]');
    expect(parsed).toEqual({
      ok: true,
      value: [5n, new PyFloat(5, '5.0'), new PyFloat(1000, '1e3'), 0n, 123456789012345678901234567890n],
    });
  });

  it('accepts NaN, Infinity and -Infinity, and echoes them as null (valid JSON, as pydantic writes them)', () => {
    const parsed = parsePythonJson('[NaN, Infinity, -Infinity, 1e400]');
    expect(parsed.ok && (parsed.value as { value: number }[]).map((f) => f.value)).toEqual([
      NaN,
      Infinity,
      -Infinity,
      Infinity,
    ]);
    expect(parsed.ok && toPythonJson(parsed.value)).toBe('[null,null,null,null]');
  });

  it('keeps the first position and the last value of a duplicate key, like a dict', () => {
    const parsed = parsePythonJson('{"a":1,"b":2,"a":3}');
    expect(parsed.ok && [...(parsed.value as Map<string, unknown>)]).toEqual([
      ['a', 3n],
      ['b', 2n],
    ]);
  });

  it('keeps key order, integer-like keys included', () => {
    const parsed = parsePythonJson('{"b":1,"2":2,"1":3}');
    expect(parsed.ok && toPythonJson(parsed.value)).toBe('{"b":1,"2":2,"1":3}');
  });

  it('joins escaped surrogate pairs and keeps lone surrogates', () => {
    expect(parsePythonJson('["\\ud83d\\ude00", "\\ud83d\\u0041", "\\udc00"]')).toEqual({
      ok: true,
      value: ['😀', '\ud83dA', '\udc00'],
    });
  });

  it('decodes every simple escape', () => {
    expect(parsePythonJson('"\\"\\\\\\/\\b\\f\\n\\r\\t"')).toEqual({ ok: true, value: '"\\/\b\f\n\r\t' });
  });

  it('skips only space, tab, newline and carriage return around the document', () => {
    expect(parsePythonJson(' \t\r\n{} \n')).toEqual({ ok: true, value: new Map() });
    expect(parsePythonJson('\u000b{}')).toMatchObject({ msg: 'Expecting value', pos: 0 });
  });
});

describe('parsePythonJson refuses what Python fails on outside JSONDecodeError', () => {
  it('refuses an integer of more than 4,300 digits (int() ValueError)', () => {
    expect(parsePythonJson('1'.repeat(4300)).ok).toBe(true);
    expect(parsePythonJson(`-${'1'.repeat(4301)}`)).toMatchObject({ ok: false, kind: 'tooComplex' });
  });

  it(`refuses nesting deeper than ${MAX_DEPTH} without exhausting the stack`, () => {
    const nested = (depth: number): string => '['.repeat(depth) + ']'.repeat(depth);
    expect(parsePythonJson(nested(MAX_DEPTH)).ok).toBe(true);
    expect(parsePythonJson(nested(MAX_DEPTH + 1))).toMatchObject({ ok: false, kind: 'tooComplex' });
    expect(parsePythonJson('{"a":'.repeat(100_000))).toMatchObject({ ok: false, kind: 'tooComplex' });
  });
});
