import type { FromSchema, JSONSchema } from 'json-schema-to-ts';

/**
 * The parts the response schemas are written with. Every object of an answer is closed (its fields
 * are all listed, `additionalProperties: false`), so the OpenAPI document, the handler types derived
 * from it (json-schema-to-ts) and the tests that check answers against it all see the same fields.
 */

/** A value and everything in it read-only: a handler may answer read-only arrays and objects. */
export type Frozen<T> = T extends readonly (infer I)[]
  ? readonly Frozen<I>[]
  : T extends object
    ? { readonly [K in keyof T]: Frozen<T[K]> }
    : T;

/** The type of a value a response schema describes (json-schema-to-ts), read-only all through. */
export type WireOf<S extends JSONSchema> = Frozen<FromSchema<S>>;

/** A route's documented success answer: the JSON Schema of its body, for the OpenAPI document and the handler's type. */
export interface ResponseSchema {
  /** JSON Schema of the body; of each message's data for an event stream. */
  readonly schema: JSONSchema;
  readonly example?: unknown;
  /** Other media types the route answers with (a TextBody in services/shared/http), e.g. text/csv. */
  readonly alternatives?: readonly string[];
  /** The answer is a text/event-stream (a TextBody) whose messages, under these event names, carry `schema`. */
  readonly events?: readonly string[];
  /** The answer is a file (a TextBody) in one of these media types, never JSON; `schema` is one of its rows. */
  readonly files?: readonly string[];
}

/** Money on the wire: an exact decimal string, never a JSON number, never an exponent ("0.0000006"). */
export const money = { type: 'string', pattern: '^\\d+(\\.\\d+)?$', description: 'exact decimal' } as const;
/** A quantity (minutes, tokens, characters) as an exact decimal string. */
export const decimalText = { ...money, description: 'exact decimal, in the unit' } as const;
/** Money of one stored row, negative on a correction's reversal (docs/corrections.md). */
export const signedMoney = { type: 'string', pattern: '^-?\\d+(\\.\\d+)?$', description: 'exact decimal' } as const;
export const signedDecimalText = { ...signedMoney, description: 'exact decimal, in the unit' } as const;
/** Money by a name (a provider, an event type). */
export const moneyMap = { type: 'object', additionalProperties: money } as const;
export const text = { type: 'string' } as const;
export const uuid = { type: 'string', format: 'uuid' } as const;
export const dateTime = { type: 'string', format: 'date-time' } as const;
export const count = { type: 'integer', minimum: 0 } as const;
/** A JSON object the caller wrote (an agent's config, a session's data): any keys. */
export const jsonObject = { type: 'object', additionalProperties: true } as const;

/** The schema, or null: null as an anyOf branch, as FastAPI writes an Optional. */
export function nullable<const S extends JSONSchema>(schema: S) {
  return { anyOf: [schema, { type: 'null' }] } as const;
}

/** A closed set of strings. */
export function oneOf<const V extends readonly string[]>(values: V) {
  return { type: 'string', enum: values } as const;
}

export function arrayOf<const S extends JSONSchema>(items: S) {
  return { type: 'array', items } as const;
}

interface ObjectOptions<O extends string> {
  /** Fields an answer may leave out; every other one is always present. */
  readonly optional?: readonly O[];
  /** Its name in the document's components (and in types generated from the document). */
  readonly title?: string;
  readonly description?: string;
}

/** An object of exactly these fields, each present unless listed as optional. */
export function closedObject<
  const P extends { readonly [name: string]: JSONSchema },
  const O extends keyof P & string = never,
>(properties: P, { optional = [], title, description }: ObjectOptions<O> = {}) {
  const absent: readonly string[] = optional;
  return {
    type: 'object',
    ...(title === undefined ? {} : { title }),
    ...(description === undefined ? {} : { description }),
    properties,
    required: Object.keys(properties).filter((name) => !absent.includes(name)) as Exclude<keyof P & string, O>[],
    additionalProperties: false,
  } as const;
}
