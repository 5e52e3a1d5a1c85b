import { laxFail, laxOk, plainError, type Lax } from './pydantic-errors.ts';
import { PyFloat } from './py-value.ts';
import { trimRust } from './py-whitespace.ts';

/**
 * pydantic's lax `int` (pydantic-core `input_python.rs` validate_int, `input/shared.rs`):
 * ints as they are, bools as 0/1, floats without a fractional part, and numeric strings
 * (whitespace, `+`, leading zeros, `_` separators and a `.0+` tail tolerated).
 */
export function laxInt(input: unknown): Lax<bigint> {
  if (typeof input === 'bigint') return laxOk(input);
  if (typeof input === 'boolean') return laxOk(input ? 1n : 0n);
  if (input instanceof PyFloat) return floatAsInt(input.value);
  if (typeof input === 'number') return Number.isInteger(input) ? laxOk(BigInt(input)) : floatAsInt(input);
  if (typeof input === 'string') return strAsInt(input);
  return laxFail(plainError('int_type'));
}

// i64::MIN as f64 and i64::MAX as f64 (the latter rounds up to 2^63)
const I64_MIN_F = -(2 ** 63);
const I64_MAX_F = 2 ** 63;

function floatAsInt(x: number): Lax<bigint> {
  if (!Number.isFinite(x)) return laxFail(plainError('finite_number'));
  if (x % 1 !== 0) return laxFail(plainError('int_from_float'));
  if (I64_MIN_F < x && x < I64_MAX_F) return laxOk(BigInt(x));
  return laxFail(plainError('int_parsing_size'));
}

function strAsInt(s: string): Lax<bigint> {
  const direct = jiterInt(s);
  if (direct === 'outOfRange') return laxFail(plainError('int_parsing_size'));
  if (direct !== undefined) return laxOk(direct);
  const cleaned = cleanIntStr(s);
  const parsed = cleaned === undefined ? undefined : jiterInt(cleaned);
  return typeof parsed === 'bigint' ? laxOk(parsed) : laxFail(plainError('int_parsing'));
}

const JSON_INT = /^-?(?:0|[1-9][0-9]*)$/;
const DIGIT_RUN = /^-?[1-9][0-9]*/;

/** jiter's `NumberInt::try_from`: a strict JSON integer; a run of digits over 4,300 is out of range. */
function jiterInt(s: string): bigint | 'outOfRange' | undefined {
  const run = DIGIT_RUN.exec(s);
  if (run && run[0].length > 4300) return 'outOfRange';
  return JSON_INT.test(s) ? BigInt(s) : undefined;
}

/** `clean_int_str`: undefined when nothing could be cleaned (so the string stays invalid). */
function cleanIntStr(original: string): string | undefined {
  let s = trimRust(original);
  if (s.startsWith('+')) {
    if (s[1] === '-') return undefined;
    s = s.slice(1);
  }
  let negative = false;
  if (s.startsWith('-')) {
    if (s[1] === '-' || s[1] === '+') return undefined;
    negative = true;
    s = s.slice(1);
  }
  const stripped = stripLeadingZeros(s);
  if (stripped === undefined) return undefined;
  s = stripped;
  const dot = s.indexOf('.');
  if (dot >= 0 && /^0+$/.test(s.slice(dot + 1))) s = s.slice(0, dot);
  const sign = negative ? '-' : '';
  const noUnderscores = stripUnderscores(s);
  if (noUnderscores !== undefined) return sign + noUnderscores;
  if (s.length === original.length) return undefined;
  return sign + s;
}

function stripLeadingZeros(s: string): string | undefined {
  const first = s[0];
  if (first === undefined) return undefined;
  if (first !== '0') return (first >= '1' && first <= '9') || first === '-' ? s : undefined;
  for (let i = 1; i < s.length; i++) {
    const c = s[i]!;
    if (c === '0' || c === '_') continue;
    if ((c >= '1' && c <= '9') || c === '-') return s.slice(i);
    if (c === '.') return s.slice(i - 1);
    return undefined;
  }
  return s.slice(-1);
}

/** Python's rule: no leading, trailing or doubled underscore. */
function stripUnderscores(s: string): string | undefined {
  if (s.startsWith('_') || s.endsWith('_') || !s.includes('_') || s.includes('__')) return undefined;
  return s.replaceAll('_', '');
}
