import { isPythonSpace, stripPython } from './py-whitespace.ts';

/** A finite decimal as sign, coefficient digits and the exponent of the last digit. */
export interface DecimalParts {
  readonly negative: boolean;
  readonly coefficient: bigint;
  readonly exponent: bigint;
}

export type DecimalParse =
  | { readonly kind: 'finite'; readonly parts: DecimalParts }
  | { readonly kind: 'nonFinite' }
  | { readonly kind: 'invalid' };

// libmpdec limits of CPython's `decimal` (64-bit): an exponent outside them is InvalidOperation.
const MAX_EMAX = 999_999_999_999_999_999n;
const MIN_ETINY = -1_999_999_999_999_999_997n;
const I64_MAX = 9_223_372_036_854_775_807n;

const FINITE = /^([+-])?(?:(\d+)(?:\.(\d*))?|\.(\d+))(?:[eE]([+-]?\d+))?$/;
const NON_FINITE = /^[+-]?(?:inf|infinity|s?nan\d*)$/i;

/** `decimal.Decimal(str)` decisions: what pydantic calls decimal_parsing vs finite_number. */
export function parseDecimalText(text: string): DecimalParse {
  const ascii = asciiNumeric(text);
  if (ascii === undefined) return { kind: 'invalid' };
  if (NON_FINITE.test(ascii)) return { kind: 'nonFinite' };
  const m = FINITE.exec(ascii);
  if (!m) return { kind: 'invalid' };
  const intDigits = m[2] ?? '';
  const fracDigits = m[3] ?? m[4] ?? '';
  const literalExp = BigInt(m[5] ?? '0');
  if (literalExp > I64_MAX || literalExp < -I64_MAX) return { kind: 'invalid' };
  const coefficient = BigInt(intDigits + fracDigits || '0');
  const exponent = literalExp - BigInt(fracDigits.length);
  const adjusted = exponent + BigInt(digitCount(coefficient) - 1);
  if (adjusted > MAX_EMAX || exponent < MIN_ETINY) return { kind: 'invalid' };
  return { kind: 'finite', parts: { negative: m[1] === '-', coefficient, exponent } };
}

/**
 * CPython `_decimal` `numeric_as_ascii`: outer whitespace stripped, every `_` dropped, Unicode
 * decimal digits read as ASCII digits; inner whitespace or any other non-ASCII character fails.
 */
function asciiNumeric(text: string): string | undefined {
  if (PLAIN_ASCII.test(text)) return text;
  let out = '';
  for (const ch of stripPython(text)) {
    const code = ch.codePointAt(0)!;
    if (ch === '_') continue;
    if (code > 0 && code <= 127) out += ch;
    else if (isPythonSpace(ch)) return undefined;
    else {
      const digit = unicodeDigitValue(code);
      if (digit === undefined) return undefined;
      out += String(digit);
    }
  }
  return out;
}

const PLAIN_ASCII = /^[+\-.0-9a-zA-Z]*$/;
const DECIMAL_DIGIT = /^\p{Nd}$/u;

/** Unicode puts each decimal digit set in a run of ten from 0 to 9; adjacent sets share a run. */
function unicodeDigitValue(code: number): number | undefined {
  if (!DECIMAL_DIGIT.test(String.fromCodePoint(code))) return undefined;
  let start = code;
  while (DECIMAL_DIGIT.test(String.fromCodePoint(start - 1))) start--;
  return (code - start) % 10;
}

function digitCount(n: bigint): number {
  return n === 0n ? 1 : (n < 0n ? -n : n).toString().length;
}

/** Parts of a JSON number literal or a schema bound, both always valid decimal text. */
export function decimalPartsOf(text: string): DecimalParts {
  const parsed = parseDecimalText(text);
  if (parsed.kind !== 'finite') throw new Error(`not a finite decimal: ${text}`);
  return parsed.parts;
}

/**
 * Plain notation without exponent and without trailing fractional zeros (`1e3` → `1000`,
 * `0.10` → `0.1`, `-0` → `0`), the form money takes everywhere in callmeter. A value whose plain
 * form would pass 100 characters keeps scientific notation (`1E-1000000`) rather than grow.
 */
export function formatDecimal(parts: DecimalParts): string {
  if (parts.coefficient === 0n) return '0';
  let digits = parts.coefficient.toString();
  let exponent = parts.exponent;
  while (exponent < 0n && digits.endsWith('0')) {
    digits = digits.slice(0, -1);
    exponent += 1n;
  }
  const sign = parts.negative ? '-' : '';
  const plainLength =
    exponent >= 0n ? BigInt(digits.length) + exponent : BigInt(Math.max(digits.length, 1)) - exponent + 1n;
  if (plainLength > 100n) {
    const adjusted = exponent + BigInt(digits.length - 1);
    const mantissa = digits.length > 1 ? `${digits[0]}.${digits.slice(1)}` : digits;
    return `${sign}${mantissa}E${adjusted >= 0n ? '+' : ''}${adjusted}`;
  }
  if (exponent >= 0n) return sign + digits + '0'.repeat(Number(exponent));
  const point = digits.length + Number(exponent);
  return point > 0
    ? `${sign}${digits.slice(0, point)}.${digits.slice(point)}`
    : `${sign}0.${'0'.repeat(-point)}${digits}`;
}

/** Exact comparison, -1 / 0 / 1, whatever the exponents. */
export function compareDecimals(a: DecimalParts, b: DecimalParts): number {
  const signA = a.coefficient === 0n ? 0 : a.negative ? -1 : 1;
  const signB = b.coefficient === 0n ? 0 : b.negative ? -1 : 1;
  if (signA !== signB || signA === 0) return Math.sign(signA - signB);
  const adjA = a.exponent + BigInt(digitCount(a.coefficient));
  const adjB = b.exponent + BigInt(digitCount(b.coefficient));
  if (adjA !== adjB) return adjA > adjB ? signA : -signA;
  // same magnitude order, so the exponents differ by less than the digit counts: scaling is cheap
  const common = a.exponent < b.exponent ? a.exponent : b.exponent;
  const scaledA = a.coefficient * 10n ** (a.exponent - common);
  const scaledB = b.coefficient * 10n ** (b.exponent - common);
  if (scaledA === scaledB) return 0;
  return scaledA > scaledB ? signA : -signA;
}
