import type { ErrorObject } from 'ajv';
import type { ValidationItem } from '../errors.ts';
import {
  enumError,
  listLengthError,
  patternError,
  plainError,
  boundError,
  stringLengthError,
  type BoundKeyword,
  type PyError,
} from './pydantic-errors.ts';
import { isPyDict, type PyValue } from './py-value.ts';
import type { BodySchema, FieldSchema, ModelSchema } from '../../../schemas/dialect/schema-dialect.ts';

export type Location = 'path' | 'query' | 'header' | 'body';

/**
 * Turns ajv's errors for one request part into pydantic items: one item per location (the first
 * check that failed, as pydantic stops at it), a too-long list hiding its items' errors, items
 * in declaration order, locations and inputs taken from the value as received (before aliases,
 * defaults and coercion touched the working copy).
 */
export function toValidationItems(
  errors: readonly ErrorObject[],
  schema: BodySchema,
  location: Location,
  original: PyValue,
): ValidationItem[] {
  const tooLong = errors.filter((e) => e.keyword === 'maxItems').map((e) => `${e.instancePath}/`);
  const seen = new Set<string>();
  const ranked: { rank: number[]; item: ValidationItem }[] = [];
  for (const error of errors) {
    if (tooLong.some((prefix) => error.instancePath.startsWith(prefix))) continue;
    const path = pathOf(error);
    const key = JSON.stringify(path);
    if (seen.has(key)) continue;
    seen.add(key);
    ranked.push({ rank: rankOf(path, schema), item: itemOf(error, path, schema, location, original) });
  }
  ranked.sort((a, b) => compareRanks(a.rank, b.rank));
  return ranked.map((r) => r.item);
}

/** The working-copy path of the failing value; a missing property's own name ends it. */
function pathOf(error: ErrorObject): (string | number)[] {
  const segments = error.instancePath === '' ? [] : error.instancePath.slice(1).split('/').map(unescapePointer);
  const path: (string | number)[] = segments.map((s) => (/^(0|[1-9]\d*)$/.test(s) ? Number(s) : s));
  if (error.keyword === 'required') path.push((error.params as { missingProperty: string }).missingProperty);
  return path;
}

const unescapePointer = (s: string): string => s.replaceAll('~1', '/').replaceAll('~0', '~');

function itemOf(
  error: ErrorObject,
  path: (string | number)[],
  schema: BodySchema,
  location: Location,
  original: PyValue,
): ValidationItem {
  const { loc, value, parent } = locate(path, schema, original);
  const pyError = pyErrorOf(error);
  let input: unknown = value;
  if (error.keyword === 'required') input = location === 'body' ? parent : null;
  const item = { type: pyError.type, loc: [location, ...loc], msg: pyError.msg, input };
  return pyError.ctx === undefined ? item : { ...item, ctx: pyError.ctx };
}

function pyErrorOf(error: ErrorObject): PyError {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'x-py':
    case 'x-py-check':
      return params['pyError'] as PyError;
    case 'required':
      return plainError('missing');
    case 'type':
      return plainError(params['type'] === 'array' ? 'list_type' : 'model_attributes_type');
    case 'enum': {
      const field = error.parentSchema as FieldSchema;
      const values = (field.enum ?? []).filter((v): v is string => v !== null);
      return enumError(values, field['x-py'] === 'literal' ? 'literal_error' : 'enum');
    }
    case 'pattern':
      return patternError(params['pattern'] as string);
    case 'minLength':
    case 'maxLength':
      return stringLengthError(error.keyword === 'minLength' ? 'short' : 'long', params['limit'] as number);
    case 'minItems':
    case 'maxItems':
      return listLengthError(
        error.keyword === 'minItems' ? 'short' : 'long',
        params['limit'] as number,
        (error.data as unknown[]).length,
      );
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
      return boundError(error.keyword as BoundKeyword, params['limit'] as number);
    default:
      throw new Error(`no pydantic error for ajv keyword "${error.keyword}"`);
  }
}

/**
 * Walks the received value along a working-copy path. A field that came in under an alias
 * (`metadata` for `session_data`) is reported under the name the client used, as pydantic does.
 */
function locate(path: readonly (string | number)[], schema: BodySchema, original: PyValue) {
  const loc: (string | number)[] = [];
  let value: PyValue | undefined = original;
  let parent: PyValue | undefined = original;
  let model: ModelSchema | undefined = schema.type === 'object' ? schema : undefined;
  for (const segment of path) {
    parent = value;
    if (typeof segment === 'number') {
      value = Array.isArray(value) ? value[segment] : undefined;
      model = schema.type === 'array' ? schema.items : undefined;
      loc.push(segment);
      continue;
    }
    const name = receivedName(segment, model, value);
    value = isPyDict(value) ? value.get(name) : undefined;
    loc.push(name);
  }
  return { loc, value: value ?? null, parent: parent ?? null };
}

function receivedName(field: string, model: ModelSchema | undefined, dict: PyValue | undefined): string {
  const aliases = model?.['x-py-aliases']?.[field];
  if (!aliases || !isPyDict(dict) || dict.has(field)) return field;
  return aliases.find((alias) => dict.has(alias)) ?? field;
}

/** Position of each path segment in declaration order: list index, then property index. */
function rankOf(path: readonly (string | number)[], schema: BodySchema): number[] {
  const model = schema.type === 'array' ? schema.items : schema;
  return path.map((segment) =>
    typeof segment === 'number' ? segment : Object.keys(model.properties).indexOf(segment),
  );
}

function compareRanks(a: readonly number[], b: readonly number[]): number {
  for (let i = 0; i < Math.min(a.length, b.length); i++) if (a[i] !== b[i]) return a[i]! - b[i]!;
  return a.length - b.length;
}
