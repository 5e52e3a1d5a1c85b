/**
 * Three languages disagree on what whitespace is, and pydantic's answers depend on which one
 * trims: Rust's `str::trim` (Unicode White_Space) for int strings, Python's `str.isspace` for
 * Decimal strings and header values. JS `trim` matches neither (it strips U+FEFF, keeps U+0085).
 */
const RUST_WHITESPACE =
  /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

const PYTHON_WHITESPACE_CHAR =
  // eslint-disable-next-line no-control-regex
  /[\t\n\v\f\r\u001c-\u001f \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]/;

export function trimRust(s: string): string {
  return s.replace(RUST_WHITESPACE, '');
}

export function isPythonSpace(ch: string): boolean {
  return PYTHON_WHITESPACE_CHAR.test(ch);
}

export function stripPython(s: string): string {
  let start = 0;
  let end = s.length;
  while (start < end && isPythonSpace(s[start]!)) start++;
  while (end > start && isPythonSpace(s[end - 1]!)) end--;
  return s.slice(start, end);
}
