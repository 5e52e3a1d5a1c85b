import type { JsonObject, JsonValue } from '../../../schemas/dialect/json-value.ts';
import { laxFail, laxOk, plainError, type Lax } from './pydantic-errors.ts';
import { PyFloat } from './py-value.ts';

export type { JsonObject, JsonValue };

/** pydantic `str`: strings only; numbers and bools are string_type (`coerce_numbers_to_str` off). */
export function laxStr(input: unknown): Lax<string> {
  return typeof input === 'string' ? laxOk(input) : laxFail(plainError('string_type'));
}

const TRUE_WORDS = new Set(['1', 't', 'y', 'on', 'yes', 'true']);
const FALSE_WORDS = new Set(['0', 'f', 'n', 'no', 'off', 'false']);

/** pydantic `bool` (`str_as_bool`, `int_as_bool`): the listed words (any ASCII case), 0/1, 0.0/1.0. */
export function laxBool(input: unknown): Lax<boolean> {
  if (typeof input === 'boolean') return laxOk(input);
  if (typeof input === 'string') {
    const word = input.replace(/[A-Z]/g, (c) => c.toLowerCase());
    if (TRUE_WORDS.has(word)) return laxOk(true);
    if (FALSE_WORDS.has(word)) return laxOk(false);
    return laxFail(plainError('bool_parsing'));
  }
  const float =
    typeof input === 'bigint'
      ? asI64Float(input)
      : input instanceof PyFloat
        ? input.value
        : typeof input === 'number'
          ? input
          : undefined;
  // a float that is not a whole i64 fails `float_as_int` and falls through to bool_type
  if (float === undefined || !Number.isInteger(float) || Math.abs(float) >= 2 ** 63)
    return laxFail(plainError('bool_type'));
  return float === 0 || float === 1 ? laxOk(float === 1) : laxFail(plainError('bool_parsing'));
}

/** An int pydantic cannot `extract_i64` is read as a float, which can only fail to be a bool. */
function asI64Float(value: bigint): number {
  return value >= -(2n ** 63n) && value < 2n ** 63n ? Number(value) : Number.NaN;
}

/**
 * pydantic `dict`: JSON objects only. The value is handed on as plain JS JSON (what gets stored
 * and echoed): ints past 2^53 become the nearest JS number, NaN and infinities stay JS numbers.
 */
export function laxDict(input: unknown): Lax<JsonObject> {
  if (!isObjectRecord(input)) return laxFail(plainError('dict_type'));
  return laxOk(toPlainJson(input) as JsonObject);
}

export function isObjectRecord(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    !(value instanceof PyFloat) &&
    !(value instanceof Date)
  );
}

function toPlainJson(value: unknown): JsonValue {
  if (typeof value === 'bigint') return Number(value);
  if (value instanceof PyFloat) return value.value;
  if (Array.isArray(value)) return value.map(toPlainJson);
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [k, toPlainJson(v)]));
  if (isObjectRecord(value)) return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toPlainJson(v)]));
  return value as JsonValue;
}
