/**
 * The values Python's `json.loads` produces, kept with the distinctions pydantic acts on:
 * - a JSON integer is a `bigint` (Python int: exact at any size, `5` is not `5.0`);
 * - a JSON number with a fraction or exponent, or NaN / Infinity / -Infinity, is a `PyFloat`,
 *   which keeps the literal text so a decimal field reads `0.1` as written, never via a JS float;
 * - an object is a `PyDict` (a `Map`): Python dicts keep insertion order, where a JS object would
 *   move integer-like keys first, and the order is visible when an error echoes the input;
 * - strings, booleans, null and arrays are the plain JS values.
 */
export class PyFloat {
  constructor(
    readonly value: number,
    readonly text: string,
  ) {}
}

export type PyDict = Map<string, PyValue>;

export type PyValue = null | boolean | string | bigint | PyFloat | PyValue[] | PyDict;

export function isPyDict(value: unknown): value is PyDict {
  return value instanceof Map;
}

/** Builds a `PyDict` from a plain object, for query strings, headers and tests. */
export function pyDictOf(entries: Readonly<Record<string, PyValue>>): PyDict {
  return new Map(Object.entries(entries));
}
