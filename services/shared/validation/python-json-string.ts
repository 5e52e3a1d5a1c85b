import { codePointsToString } from './decode-body-text.ts';

/**
 * CPython 3.11 `scanstring_unicode` (strict mode) over Python code points: escapes, surrogate
 * pairs joined only when both halves are escaped, and the exact error positions.
 */
export class DecodeError {
  constructor(
    readonly msg: string,
    readonly pos: number,
  ) {}
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

/** `idx` is just past the opening quote; returns the string and the index past the closing one. */
export function scanPyString(s: Uint32Array, idx: number): [string, number] {
  const begin = idx - 1;
  const parts: string[] = [];
  for (;;) {
    let next = idx;
    while (next < s.length && s[next] !== QUOTE && s[next] !== BACKSLASH) {
      if (s[next]! <= 0x1f) throw new DecodeError('Invalid control character at', next);
      next++;
    }
    if (next >= s.length) throw new DecodeError('Unterminated string starting at', begin);
    if (next > idx) parts.push(codePointsToString(s, idx, next));
    if (s[next] === QUOTE) return [parts.join(''), next + 1];
    if (next + 1 >= s.length) throw new DecodeError('Unterminated string starting at', begin);
    const [chunk, end] = scanEscape(s, next + 1);
    parts.push(chunk);
    idx = end;
  }
}

/** One escape; `idx` is the character after the backslash. */
function scanEscape(s: Uint32Array, idx: number): [string, number] {
  const c = s[idx]!;
  if (c !== 0x75) {
    const simple = SIMPLE_ESCAPES.get(c);
    if (simple === undefined) throw new DecodeError('Invalid \\escape', idx - 1);
    return [simple, idx + 1];
  }
  let end = idx + 5;
  if (end >= s.length) throw new DecodeError('Invalid \\uXXXX escape', idx);
  let code = readHex4(s, idx + 1, idx);
  if (code >= 0xd800 && code <= 0xdbff && end + 6 < s.length && s[end] === BACKSLASH && s[end + 1] === 0x75) {
    const low = readHex4(s, end + 2, end + 1);
    if (low >= 0xdc00 && low <= 0xdfff) {
      code = 0x10000 + ((code - 0xd800) << 10) + (low - 0xdc00);
      end += 6;
    }
  }
  return [String.fromCodePoint(code), end];
}

function readHex4(s: Uint32Array, at: number, errorPos: number): number {
  let value = 0;
  for (let k = 0; k < 4; k++) {
    const digit = hexValue(s[at + k]);
    if (digit < 0) throw new DecodeError('Invalid \\uXXXX escape', errorPos);
    value = (value << 4) | digit;
  }
  return value;
}

const SIMPLE_ESCAPES: ReadonlyMap<number, string> = new Map([
  [0x22, '"'],
  [0x5c, '\\'],
  [0x2f, '/'],
  [0x62, '\b'],
  [0x66, '\f'],
  [0x6e, '\n'],
  [0x72, '\r'],
  [0x74, '\t'],
]);

function hexValue(c: number | undefined): number {
  if (c === undefined) return -1;
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}
