/**
 * The JSON Schema dialect of HTTP requests. Plain JSON Schema plus these keywords:
 * - `x-py` names the pydantic type of a field; it coerces the value in pydantic's lax mode
 *   before the standard keywords (`minimum`, `maxLength`, `pattern`, `enum`...) look at it;
 * - `x-py-nullable: true` makes a field `T | None`;
 * - `x-py-aliases` on a model lists other names a field is accepted under (`AliasChoices`);
 * - `x-py-empty-absent: true` makes an empty string count as a field left out;
 * - `x-py-check` names a field validator of services/shared/validation/py-checks.ts, run after the coercion.
 * Field schemas carry no `type`: ajv checks `type` before any keyword could coerce.
 * Schemas are written `as const` so their TypeScript types come from them (schema-types.ts).
 */
/** The field validators of services/shared/validation/py-checks.ts, by name. */
export type PyCheck = 'time-zone' | 'date-or-datetime';

export type PyKind = 'str' | 'int' | 'decimal' | 'datetime' | 'dict' | 'enum' | 'literal' | 'uuid' | 'bool' | 'list';

export interface FieldSchema {
  readonly 'x-py': PyKind;
  readonly 'x-py-nullable'?: boolean;
  readonly 'x-py-empty-absent'?: boolean;
  readonly 'x-py-check'?: PyCheck;
  /** For `enum` and `literal`; include `null` to make the field nullable. */
  readonly enum?: readonly (string | null)[];
  readonly default?: unknown;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly exclusiveMinimum?: number;
  readonly exclusiveMaximum?: number;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly pattern?: string;
  /** For `list`: the schema of each item (a JSON array, pydantic's `list[T]`), and how many it holds. */
  readonly items?: FieldSchema;
  readonly minItems?: number;
  readonly maxItems?: number;
  readonly description?: string;
}

export interface ModelSchema {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, FieldSchema>>;
  readonly required?: readonly string[];
  readonly 'x-py-aliases'?: Readonly<Record<string, readonly string[]>>;
  readonly title?: string;
  readonly description?: string;
}

export interface ListSchema {
  readonly type: 'array';
  readonly items: ModelSchema;
  readonly maxItems?: number;
  readonly minItems?: number;
  readonly description?: string;
}

export type BodySchema = ModelSchema | ListSchema;

/** The standard JSON Schema keywords a field may carry: OpenAPI shows them as they are (openapi-schema.ts). */
export const STANDARD_FIELD_KEYS = [
  'default',
  'minimum',
  'maximum',
  'exclusiveMinimum',
  'exclusiveMaximum',
  'minLength',
  'maxLength',
  'pattern',
  'minItems',
  'maxItems',
  'description',
] as const;

const FIELD_KEYS = new Set([
  'x-py',
  'x-py-nullable',
  'x-py-empty-absent',
  'x-py-check',
  'enum',
  'items',
  ...STANDARD_FIELD_KEYS,
]);
const MODEL_KEYS = new Set(['type', 'properties', 'required', 'x-py-aliases', 'title', 'description']);
const LIST_KEYS = new Set(['type', 'items', 'maxItems', 'minItems', 'description']);

/**
 * Refuses, at start-up, any schema this engine cannot map to pydantic errors, so a request never
 * meets an ajv error without a pydantic twin. Ints must be bounded inside 2^53 so their value is
 * an exact JS number (an out-of-range input gets a pydantic-shaped range error instead).
 */
export function assertBodySchema(schema: BodySchema, where: string): void {
  if (schema.type === 'array') {
    assertKeys(schema, LIST_KEYS, where);
    assertModelSchema(schema.items, `${where}.items`);
  } else assertModelSchema(schema, where);
}

export function assertModelSchema(schema: ModelSchema, where: string): void {
  assertKeys(schema, MODEL_KEYS, where);
  if (schema.type !== 'object') throw new Error(`${where}: a model schema has type "object"`);
  for (const [name, field] of Object.entries(schema.properties)) assertFieldSchema(field, `${where}.${name}`);
  for (const name of schema.required ?? [])
    if (!(name in schema.properties)) throw new Error(`${where}: required "${name}" is not a property`);
}

function assertFieldSchema(field: FieldSchema, where: string): void {
  assertKeys(field, FIELD_KEYS, where);
  const kind = field['x-py'];
  const isChoice = kind === 'enum' || kind === 'literal';
  if (isChoice !== (field.enum !== undefined)) throw new Error(`${where}: "enum" goes with x-py enum or literal`);
  if (isChoice && field['x-py-nullable']) throw new Error(`${where}: a nullable enum lists null among its values`);
  if ((kind === 'list') !== (field.items !== undefined)) throw new Error(`${where}: "items" goes with x-py list`);
  if (field.items !== undefined) assertFieldSchema(field.items, `${where}.items`);
  if (kind !== 'int') return;
  const upper = field.maximum ?? field.exclusiveMaximum;
  const lower = field.minimum ?? field.exclusiveMinimum;
  const safe = (n: number | undefined): boolean => n !== undefined && Math.abs(n) <= Number.MAX_SAFE_INTEGER;
  if (!safe(upper) || !safe(lower))
    throw new Error(`${where}: an int field needs a lower and an upper bound within 2^53`);
}

function assertKeys(schema: object, allowed: ReadonlySet<string>, where: string): void {
  for (const key of Object.keys(schema))
    if (!allowed.has(key)) throw new Error(`${where}: keyword "${key}" is not supported`);
}
