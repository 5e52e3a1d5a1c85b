import type { ValidationItem } from '../errors.ts';
import { toValidationItems, type Location } from './map-ajv-errors.ts';
import { plainError } from './pydantic-errors.ts';
import { PyFloat, type PyValue } from './py-value.ts';
import type { Ajv } from 'ajv';
import { requestAjv } from './request-ajv.ts';
import {
  assertBodySchema,
  assertModelSchema,
  type BodySchema,
  type ModelSchema,
} from '../../../schemas/dialect/schema-dialect.ts';
import type { FromPySchema } from '../../../schemas/dialect/schema-types.ts';

export interface RequestSchemas {
  readonly path?: ModelSchema;
  readonly query?: ModelSchema;
  readonly headers?: ModelSchema;
  readonly body?: BodySchema;
}

type Params = Readonly<Record<string, string | readonly string[] | undefined>>;

export interface RequestParts {
  readonly path?: Params;
  /** Koa's `ctx.query`; a repeated key counts with its last value, as Starlette's `.get`. */
  readonly query?: Params;
  /** Node's lower-cased `req.headers`. */
  readonly headers?: Params;
  /** `readJsonBody(...).value`: `undefined` when there is no body. */
  readonly body?: PyValue | undefined;
}

export type ValidatedRequest<S extends RequestSchemas> = { -readonly [K in keyof S]: FromPySchema<S[K]> };

export type RequestValidation<S extends RequestSchemas> =
  | { readonly ok: true; readonly value: ValidatedRequest<S> }
  | { readonly ok: false; readonly items: readonly ValidationItem[] };

type PartValidator = (received: PyValue | undefined) => { value?: unknown; items: ValidationItem[] };

/** FastAPI's order: path, query, header, then body errors. */
const PART_ORDER = [
  ['path', 'path'],
  ['query', 'query'],
  ['headers', 'header'],
  ['body', 'body'],
] as const satisfies readonly (readonly [keyof RequestSchemas, Location])[];

/**
 * Checks a route's schemas against the dialect at once (call it when the route module is built) and
 * returns the per-request check, which compiles them with ajv on its first request: a process starts
 * without compiling the schemas of routes it is never asked (compiling them all took about 0.5 s of a
 * start's CPU). A schema ajv refused would answer 500 on its route's first request; the fuzz suite asks
 * every route. Errors come as FastAPI would send them: every part validated, items in
 * FastAPI's order, ready for `AppError.validation(items)`.
 */
export function compileRequest<const S extends RequestSchemas>(
  schemas: S,
): (parts: RequestParts) => RequestValidation<S> {
  const validators: [keyof RequestSchemas, PartValidator][] = [];
  for (const [part, location] of PART_ORDER) {
    const schema = schemas[part];
    if (schema === undefined) continue;
    if (part === 'body') assertBodySchema(schema, 'body');
    else assertModelSchema(schema as ModelSchema, part);
    validators.push([part, compilePart(schema, location)]);
  }
  return (parts) => {
    const value: Record<string, unknown> = {};
    const items: ValidationItem[] = [];
    for (const [part, validate] of validators) {
      const received = part === 'body' ? parts.body : paramsDict(parts[part], part === 'headers' ? 'first' : 'last');
      const result = validate(received);
      items.push(...result.items);
      value[part] = result.value;
    }
    return items.length > 0 ? { ok: false, items } : { ok: true, value: value as ValidatedRequest<S> };
  };
}

function compilePart(schema: BodySchema, location: Location): PartValidator {
  let compiled: ReturnType<Ajv['compile']> | undefined;
  return (received) => {
    const validate = (compiled ??= requestAjv().compile(schema));
    if (received === undefined || received === null) {
      return { items: [{ type: 'missing', loc: [location], msg: plainError('missing').msg, input: null }] };
    }
    const working = workingCopy(received, schema);
    if (validate(working)) return { value: plainModels(working, schema), items: [] };
    return { items: toValidationItems(validate.errors ?? [], schema, location, received) };
  };
}

function paramsDict(params: Params | undefined, pick: 'first' | 'last'): PyValue {
  const dict = new Map<string, PyValue>();
  for (const [name, raw] of Object.entries(params ?? {})) {
    const value = typeof raw === 'string' ? raw : pick === 'first' ? raw?.[0] : raw?.at(-1);
    if (value !== undefined) dict.set(name, value);
  }
  return dict;
}

/**
 * What ajv validates and coerces in place: dicts become null-prototype objects (no `__proto__`
 * surprises), lists are copied, leaves are shared (they are immutable). A float where a model is
 * expected becomes a plain number, so ajv's `type: "object"` does not mistake a PyFloat for one.
 */
function workingCopy(received: PyValue, schema: BodySchema): unknown {
  const modelPosition = (value: PyValue): unknown => (value instanceof PyFloat ? value.value : toWorking(value));
  if (schema.type === 'array' && Array.isArray(received)) return received.map(modelPosition);
  return modelPosition(received);
}

function toWorking(value: PyValue): unknown {
  if (Array.isArray(value)) return value.map(toWorking);
  if (value instanceof Map) {
    const object: Record<string, unknown> = Object.create(null);
    for (const [key, item] of value) object[key] = toWorking(item);
    return object;
  }
  return value;
}

/** Validated models as ordinary objects with the declared keys in declaration order, as pydantic dumps them. */
function plainModels(working: unknown, schema: BodySchema): unknown {
  const model = schema.type === 'array' ? schema.items : schema;
  const plain = (item: unknown): Record<string, unknown> => {
    const source = item as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const key of Object.keys(model.properties)) if (source[key] !== undefined) out[key] = source[key];
    return out;
  };
  return Array.isArray(working) ? working.map(plain) : plain(working);
}
