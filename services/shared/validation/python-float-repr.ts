/**
 * Python's `repr(float)` / `json.dumps(float)`: the shortest digits that round-trip (the same
 * digits JS finds), but Python's layout: fixed notation while the decimal exponent is in
 * [-4, 16), always with a fractional part (`2.0`), otherwise `d.ddde±XX` with at least two
 * exponent digits (`1e+16`, `1.5e-07`). json.dumps writes the non-finite ones as NaN / Infinity.
 */
export function formatPyFloat(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (x === Number.POSITIVE_INFINITY) return 'Infinity';
  if (x === Number.NEGATIVE_INFINITY) return '-Infinity';
  if (x === 0) return Object.is(x, -0) ? '-0.0' : '0.0';
  const sign = x < 0 ? '-' : '';
  const [mantissa, exponentText] = Math.abs(x).toExponential().split('e') as [string, string];
  const digits = mantissa.replace('.', '');
  const exponent = Number(exponentText);
  // Python's decpt: the value is 0.<digits> x 10^decpt
  const decpt = exponent + 1;
  if (decpt > -4 && decpt <= 16) return sign + fixedNotation(digits, decpt);
  const rest = digits.length > 1 ? `.${digits.slice(1)}` : '';
  const expSign = exponent < 0 ? '-' : '+';
  return `${sign}${digits[0]}${rest}e${expSign}${String(Math.abs(exponent)).padStart(2, '0')}`;
}

function fixedNotation(digits: string, decpt: number): string {
  if (decpt <= 0) return `0.${'0'.repeat(-decpt)}${digits}`;
  if (decpt >= digits.length) return `${digits}${'0'.repeat(decpt - digits.length)}.0`;
  return `${digits.slice(0, decpt)}.${digits.slice(decpt)}`;
}

/** `repr(str)` for the values shown in enum messages: single quotes unless the text has one. */
export function pyStrRepr(s: string): string {
  const quote = s.includes("'") && !s.includes('"') ? '"' : "'";
  let out = quote;
  for (const ch of s) {
    const code = ch.codePointAt(0)!;
    if (ch === quote || ch === '\\') out += `\\${ch}`;
    else if (ch === '\n') out += '\\n';
    else if (ch === '\r') out += '\\r';
    else if (ch === '\t') out += '\\t';
    else if (code < 0x20 || code === 0x7f) out += `\\x${code.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return out + quote;
}
