import { formatPyFloat } from './python-float-repr.ts';
import { PyFloat } from './py-value.ts';

/**
 * Serialises like Python's `json.dumps(v, ensure_ascii=False, separators=(",", ":"))`, which is
 * how Starlette renders a 422 body: compact, raw UTF-8, floats in repr form, ints exact.
 * Accepts `PyValue`s (`bigint`, `PyFloat`, `Map`) and plain JS values (a JS number that is an
 * integer prints as an int: that is what error contexts such as `{"ge":0}` hold).
 * Unlike Starlette (`allow_nan=False`, which turns an echoed NaN into a 500), NaN and Infinity
 * are written as null, as pydantic's own JSON serializer writes them by default: the body stays
 * JSON that every client can parse.
 */
export function toPythonJson(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (value === true) return 'true';
  if (value === false) return 'false';
  if (typeof value === 'string') return quotePyString(value);
  if (typeof value === 'bigint') return value.toString();
  if (typeof value === 'number')
    return Number.isInteger(value) && !Object.is(value, -0) ? BigInt(value).toString() : floatToJson(value);
  if (value instanceof PyFloat) return floatToJson(value.value);
  if (Array.isArray(value)) return `[${value.map(toPythonJson).join(',')}]`;
  if (value instanceof Map) return dictToJson(value.entries());
  if (value instanceof Date) return quotePyString(value.toISOString());
  if (typeof value === 'object') return dictToJson(Object.entries(value));
  return quotePyString(String(value));
}

function floatToJson(x: number): string {
  return Number.isFinite(x) ? formatPyFloat(x) : 'null';
}

function dictToJson(entries: Iterable<[unknown, unknown]>): string {
  const parts: string[] = [];
  for (const [key, item] of entries) parts.push(`${quotePyString(String(key))}:${toPythonJson(item)}`);
  return `{${parts.join(',')}}`;
}

const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '"': '\\"',
  '\\': '\\\\',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\b': '\\b',
  '\f': '\\f',
};

// eslint-disable-next-line no-control-regex
const NEEDS_ESCAPE = /["\\\u0000-\u001f]/g;

function quotePyString(s: string): string {
  const escaped = s.replace(
    NEEDS_ESCAPE,
    (ch) => SHORT_ESCAPES[ch] ?? `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
  return `"${escaped}"`;
}
