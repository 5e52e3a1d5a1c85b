import { formatPyFloat, pyStrRepr } from './python-float-repr.ts';

/** One pydantic error before it gets a location and an input: the `type`, `msg` and `ctx` keys. */
export interface PyError {
  readonly type: string;
  readonly msg: string;
  readonly ctx?: Readonly<Record<string, unknown>>;
}

/** pydantic-core 2.41 `message_template_python` texts of the errors that carry no context. */
const PLAIN_MESSAGES = {
  missing: 'Field required',
  string_type: 'Input should be a valid string',
  int_type: 'Input should be a valid integer',
  int_parsing: 'Input should be a valid integer, unable to parse string as an integer',
  int_from_float: 'Input should be a valid integer, got a number with a fractional part',
  int_parsing_size: 'Unable to parse input string as an integer, exceeded maximum size',
  finite_number: 'Input should be a finite number',
  decimal_type: 'Decimal input should be an integer, float, string or Decimal object',
  decimal_parsing: 'Input should be a valid decimal',
  dict_type: 'Input should be a valid dictionary',
  bool_type: 'Input should be a valid boolean',
  bool_parsing: 'Input should be a valid boolean, unable to interpret input',
  datetime_type: 'Input should be a valid datetime',
  uuid_type: 'UUID input should be a string, bytes or UUID object',
  model_attributes_type: 'Input should be a valid dictionary or object to extract fields from',
  list_type: 'Input should be a valid list',
} as const;

export type PlainErrorType = keyof typeof PLAIN_MESSAGES;

export function plainError(type: PlainErrorType): PyError {
  return { type, msg: PLAIN_MESSAGES[type] };
}

/** Errors whose context is a parser's own text: speedate's or the uuid crate's. */
export function parsingError(
  type: 'datetime_parsing' | 'datetime_from_date_parsing' | 'uuid_parsing',
  error: string,
): PyError {
  const prefix = {
    datetime_parsing: 'Input should be a valid datetime',
    datetime_from_date_parsing: 'Input should be a valid datetime or date',
    uuid_parsing: 'Input should be a valid UUID',
  }[type];
  return { type, msg: `${prefix}, ${error}`, ctx: { error } };
}

/** `'A', 'B' or 'C'`: reprs joined with ", " and the last with " or " (`expected_repr_name`). */
export function enumError(values: readonly string[], type: 'enum' | 'literal_error'): PyError {
  const reprs = values.map(pyStrRepr);
  const expected = reprs.length > 1 ? `${reprs.slice(0, -1).join(', ')} or ${reprs.at(-1)}` : (reprs[0] ?? '');
  return { type, msg: `Input should be ${expected}`, ctx: { expected } };
}

export function patternError(pattern: string): PyError {
  return { type: 'string_pattern_mismatch', msg: `String should match pattern '${pattern}'`, ctx: { pattern } };
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? '' : 's'}`;

export function stringLengthError(kind: 'short' | 'long', limit: number): PyError {
  return kind === 'short'
    ? {
        type: 'string_too_short',
        msg: `String should have at least ${plural(limit, 'character')}`,
        ctx: { min_length: limit },
      }
    : {
        type: 'string_too_long',
        msg: `String should have at most ${plural(limit, 'character')}`,
        ctx: { max_length: limit },
      };
}

export function listLengthError(kind: 'short' | 'long', limit: number, actual: number): PyError {
  const bound = kind === 'short' ? 'at least' : 'at most';
  const key = kind === 'short' ? 'min_length' : 'max_length';
  return {
    type: kind === 'short' ? 'too_short' : 'too_long',
    msg: `List should have ${bound} ${plural(limit, 'item')} after validation, not ${actual}`,
    ctx: { field_type: 'List', [key]: limit, actual_length: actual },
  };
}

export type BoundKeyword = 'maximum' | 'exclusiveMaximum' | 'minimum' | 'exclusiveMinimum';

const BOUNDS: Readonly<Record<BoundKeyword, { type: string; key: string; words: string }>> = {
  maximum: { type: 'less_than_equal', key: 'le', words: 'less than or equal to' },
  exclusiveMaximum: { type: 'less_than', key: 'lt', words: 'less than' },
  minimum: { type: 'greater_than_equal', key: 'ge', words: 'greater than or equal to' },
  exclusiveMinimum: { type: 'greater_than', key: 'gt', words: 'greater than' },
};

/** pydantic's check order for numeric bounds: le, lt, ge, gt. */
export const BOUND_ORDER: readonly BoundKeyword[] = ['maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum'];

export function boundError(keyword: BoundKeyword, limit: number): PyError {
  const { type, key, words } = BOUNDS[keyword];
  const shown = Number.isInteger(limit) ? String(limit) : formatPyFloat(limit);
  return { type, msg: `Input should be ${words} ${shown}`, ctx: { [key]: limit } };
}

export type Lax<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: PyError };

export const laxOk = <T>(value: T): Lax<T> => ({ ok: true, value });
export const laxFail = (error: PyError): Lax<never> => ({ ok: false, error });
