import type { KeywordDefinition, SchemaValidateFunction } from 'ajv';
import { decimalBoundsCheck, laxDecimal, type DecimalBounds } from './lax-decimal.ts';
import { laxDatetime } from './lax-datetime.ts';
import { laxInt } from './lax-int.ts';
import { isObjectRecord, laxBool, laxDict, laxStr } from './lax-scalars.ts';
import { laxUuid } from './lax-uuid.ts';
import { PY_CHECKS, type PyCheck } from './py-checks.ts';
import { laxFail, laxOk, plainError, type Lax } from './pydantic-errors.ts';
import type { FieldSchema, PyKind } from '../../../schemas/dialect/schema-dialect.ts';

type Coerce = (input: unknown) => Lax<unknown>;

/** One coercion per pydantic type, built once per field schema. */
const COERCERS: Readonly<Record<PyKind, (field: FieldSchema) => Coerce>> = {
  str: () => laxStr,
  bool: () => laxBool,
  dict: () => laxDict,
  uuid: () => laxUuid,
  datetime: () => laxDatetime,
  // ajv's `minimum`/`maximum` then judge the JS number; bounds within 2^53 keep it exact
  int: () => (input) => {
    const result = laxInt(input);
    return result.ok ? laxOk(Number(result.value)) : result;
  },
  decimal: (field) => {
    const checkBounds = decimalBoundsCheck(field as DecimalBounds);
    return (input) => {
      const result = laxDecimal(input);
      return result.ok ? checkBounds(result.value) : result;
    };
  },
  // an enum or literal is only compared, by ajv's own `enum`
  enum: () => laxOk,
  literal: () => laxOk,
  // a list is checked item by item by ajv's own `items` (each item's x-py), then by minItems/maxItems
  list: () => (input) => (Array.isArray(input) ? laxOk(input) : laxFail(plainError('list_type'))),
};

/**
 * `x-py`: replaces the field's value by its pydantic lax coercion, or reports the pydantic error
 * (kept whole in `params.pyError`). It must modify the parent's property because ajv re-reads a
 * field only through its parent after a modifying keyword.
 */
export const pyTypeKeyword: KeywordDefinition = {
  keyword: 'x-py',
  schemaType: 'string',
  modifying: true,
  errors: true,
  compile(kind: PyKind, parentSchema) {
    const field = parentSchema as FieldSchema;
    const coerce = COERCERS[kind](field);
    const nullable = field['x-py-nullable'] === true;
    const emptyAbsent = field['x-py-empty-absent'] === true;
    const validate: SchemaValidateFunction = (data, dataCxt) => {
      if (data === null && nullable) return true;
      if (data === '' && emptyAbsent) {
        if (dataCxt?.parentData !== undefined)
          delete (dataCxt.parentData as Record<string | number, unknown>)[dataCxt.parentDataProperty];
        return true;
      }
      const result = coerce(data);
      if (!result.ok) {
        validate.errors = [{ keyword: 'x-py', message: result.error.msg, params: { pyError: result.error } }];
        return false;
      }
      if (dataCxt?.parentData !== undefined)
        (dataCxt.parentData as Record<string | number, unknown>)[dataCxt.parentDataProperty] = result.value;
      return true;
    };
    return validate;
  },
};

/**
 * `x-py-aliases`: copies a field given under another accepted name to its own name, before
 * `required` and defaults see the object (keywords without a type run first in ajv).
 */
export const pyAliasesKeyword: KeywordDefinition = {
  keyword: 'x-py-aliases',
  schemaType: 'object',
  modifying: true,
  compile(aliases: Readonly<Record<string, readonly string[]>>) {
    return (data: unknown) => {
      if (!isObjectRecord(data)) return true;
      for (const [field, names] of Object.entries(aliases)) {
        if (data[field] !== undefined) continue;
        const found = names.find((name) => data[name] !== undefined);
        if (found !== undefined) data[field] = data[found];
      }
      return true;
    };
  },
};

export const pyNullableKeyword: KeywordDefinition = { keyword: 'x-py-nullable', schemaType: 'boolean' };

/** `x-py-empty-absent: true`: an empty string counts as a field left out (read by `x-py`). */
export const pyEmptyAbsentKeyword: KeywordDefinition = { keyword: 'x-py-empty-absent', schemaType: 'boolean' };

/**
 * `x-py-check`: a named field validator (py-checks.ts) run after the field's `x-py` coercion. A
 * value that coercion refused is left alone: pydantic reports one error per field.
 */
export const pyCheckKeyword: KeywordDefinition = {
  keyword: 'x-py-check',
  schemaType: 'string',
  errors: true,
  compile(name: PyCheck) {
    const check = PY_CHECKS[name];
    const validate: SchemaValidateFunction = (data) => {
      if (typeof data !== 'string' || data === '') return true;
      const error = check(data);
      if (error === null) return true;
      validate.errors = [{ keyword: 'x-py-check', message: error.msg, params: { pyError: error } }];
      return false;
    };
    return validate;
  },
};
