import { codePointsToString } from './decode-body-text.ts';
import { DecodeError, scanPyString } from './python-json-string.ts';
import { PyFloat, type PyDict, type PyValue } from './py-value.ts';

/**
 * A port of CPython 3.11's C JSON scanner (`Modules/_json.c`, `json/decoder.py`): the same
 * accept/reject decisions, the same JSONDecodeError messages and positions (0-based code-point
 * index), NaN / Infinity / -Infinity and big integers accepted, duplicate keys resolved like a
 * dict (last value wins, first position kept).
 *
 * `tooComplex` stands for the exceptions that are not JSONDecodeError, which FastAPI answers with
 * a 400: an integer of more than 4,300 digits (ValueError from `int()`), and nesting deeper than
 * MAX_DEPTH. CPython itself fails near depth 1,000 with RecursionError, at a depth that depends on
 * the stack; 512 keeps our own recursion well inside Node's stack and gives the same answer.
 */
export type PythonJsonResult =
  | { readonly ok: true; readonly value: PyValue }
  | { readonly ok: false; readonly kind: 'decode'; readonly msg: string; readonly pos: number }
  | { readonly ok: false; readonly kind: 'tooComplex'; readonly reason: string };

export const MAX_DEPTH = 512;
const MAX_INT_DIGITS = 4300;

class TooComplex {
  constructor(readonly reason: string) {}
}

const QUOTE = 0x22;
const isWhitespace = (c: number | undefined): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
const isDigit = (c: number | undefined): boolean => c !== undefined && c >= 0x30 && c <= 0x39;

export function parsePythonJson(input: string | Uint32Array): PythonJsonResult {
  const cps = typeof input === 'string' ? Uint32Array.from(input, (ch) => ch.codePointAt(0)!) : input;
  const scanner = new Scanner(cps);
  try {
    let idx = scanner.skipWhitespace(0);
    const [value, end] = scanner.scanOnce(idx, 0);
    idx = scanner.skipWhitespace(end);
    if (idx !== cps.length) throw new DecodeError('Extra data', idx);
    return { ok: true, value };
  } catch (error) {
    if (error instanceof DecodeError) return { ok: false, kind: 'decode', msg: error.msg, pos: error.pos };
    if (error instanceof TooComplex) return { ok: false, kind: 'tooComplex', reason: error.reason };
    throw error;
  }
}

// PyFloats are immutable, so every NaN can share one
const CONSTANTS: readonly (readonly [string, PyValue])[] = [
  ['null', null],
  ['true', true],
  ['false', false],
  ['NaN', new PyFloat(Number.NaN, 'NaN')],
  ['Infinity', new PyFloat(Number.POSITIVE_INFINITY, 'Infinity')],
  ['-Infinity', new PyFloat(Number.NEGATIVE_INFINITY, '-Infinity')],
];

class Scanner {
  constructor(private readonly s: Uint32Array) {}

  skipWhitespace(idx: number): number {
    while (isWhitespace(this.s[idx])) idx++;
    return idx;
  }

  /** `scan_once_unicode`: a failed value is Python's StopIteration, reported as "Expecting value". */
  scanOnce(idx: number, depth: number): [PyValue, number] {
    const c = this.s[idx];
    if (c === undefined) throw new DecodeError('Expecting value', idx);
    if (c === QUOTE) return scanPyString(this.s, idx + 1);
    if (c === 0x7b || c === 0x5b) {
      if (depth >= MAX_DEPTH) throw new TooComplex(`nesting deeper than ${MAX_DEPTH}`);
      return c === 0x7b ? this.parseObject(idx + 1, depth + 1) : this.parseArray(idx + 1, depth + 1);
    }
    const constant = this.matchConstant(idx);
    if (constant) return constant;
    return this.matchNumber(idx);
  }

  private matchConstant(idx: number): [PyValue, number] | undefined {
    for (const [word, value] of CONSTANTS) {
      if (this.s[idx] === word.charCodeAt(0) && this.hasWord(idx, word)) return [value, idx + word.length];
    }
    return undefined;
  }

  private hasWord(idx: number, word: string): boolean {
    for (let k = 0; k < word.length; k++) if (this.s[idx + k] !== word.charCodeAt(k)) return false;
    return true;
  }

  private parseObject(idx: number, depth: number): [PyDict, number] {
    const dict: PyDict = new Map();
    idx = this.skipWhitespace(idx);
    if (this.s[idx] === 0x7d) return [dict, idx + 1];
    for (;;) {
      if (this.s[idx] !== QUOTE) throw new DecodeError('Expecting property name enclosed in double quotes', idx);
      const [key, afterKey] = scanPyString(this.s, idx + 1);
      idx = this.skipWhitespace(afterKey);
      if (this.s[idx] !== 0x3a) throw new DecodeError("Expecting ':' delimiter", idx);
      idx = this.skipWhitespace(idx + 1);
      const [value, afterValue] = this.scanOnce(idx, depth);
      dict.set(key, value);
      idx = this.skipWhitespace(afterValue);
      if (this.s[idx] === 0x7d) return [dict, idx + 1];
      if (this.s[idx] !== 0x2c) throw new DecodeError("Expecting ',' delimiter", idx);
      idx = this.skipWhitespace(idx + 1);
    }
  }

  private parseArray(idx: number, depth: number): [PyValue[], number] {
    const list: PyValue[] = [];
    idx = this.skipWhitespace(idx);
    if (this.s[idx] === 0x5d) return [list, idx + 1];
    for (;;) {
      const [value, afterValue] = this.scanOnce(idx, depth);
      list.push(value);
      idx = this.skipWhitespace(afterValue);
      if (this.s[idx] === 0x5d) return [list, idx + 1];
      if (this.s[idx] !== 0x2c) throw new DecodeError("Expecting ',' delimiter", idx);
      idx = this.skipWhitespace(idx + 1);
    }
  }

  /** `_match_number_unicode`: -?(0|[1-9]\d*)(\.\d+)?([eE][-+]?\d+)? with Python's backtracking. */
  private matchNumber(start: number): [PyValue, number] {
    const s = this.s;
    let idx = start;
    if (s[idx] === 0x2d) idx++;
    if (s[idx] === 0x30) idx++;
    else if (isDigit(s[idx])) while (isDigit(s[idx])) idx++;
    else throw new DecodeError('Expecting value', start);
    const intEnd = idx;
    if (s[idx] === 0x2e && isDigit(s[idx + 1])) {
      idx += 2;
      while (isDigit(s[idx])) idx++;
    }
    if (s[idx] === 0x65 || s[idx] === 0x45) {
      let k = idx + 1;
      if (s[k] === 0x2b || s[k] === 0x2d) k++;
      if (isDigit(s[k])) {
        while (isDigit(s[k])) k++;
        idx = k;
      }
    }
    const text = codePointsToString(s, start, idx);
    if (idx !== intEnd) return [new PyFloat(Number(text), text), idx];
    const digits = intEnd - start - (s[start] === 0x2d ? 1 : 0);
    if (digits > MAX_INT_DIGITS) throw new TooComplex(`integer of ${digits} digits`);
    return [BigInt(text), idx];
  }
}
