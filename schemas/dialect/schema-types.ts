import type { JsonObject } from './json-value.ts';

/**
 * The TypeScript type of a validated request, read off the same `as const` schema that ajv
 * compiles (in the spirit of json-schema-to-ts's `FromSchema`, but for this dialect: the types
 * are those of the values after pydantic's coercion, e.g. a decimal is its exact text).
 */
interface PyKindValue {
  str: string;
  int: number;
  decimal: string;
  datetime: Date;
  dict: JsonObject;
  uuid: string;
  bool: boolean;
}

export type FieldValue<F> = F extends { readonly enum: readonly (infer E)[] }
  ? E
  : F extends { readonly 'x-py': 'list'; readonly items: infer I }
    ? FieldValue<I>[]
    : F extends { readonly 'x-py': infer K extends keyof PyKindValue }
      ? PyKindValue[K] | (F extends { readonly 'x-py-nullable': true } ? null : never)
      : never;

type Props<S> = S extends { readonly properties: infer P } ? P : never;

/** Keys always present after validation: required ones, and those ajv fills with a default. */
type PresentKeys<S> =
  | (S extends { readonly required: readonly (infer R)[] } ? R : never)
  | { [K in keyof Props<S>]: Props<S>[K] extends { readonly default: unknown } ? K : never }[keyof Props<S>];

type Simplify<T> = { [K in keyof T]: T[K] } & {};

export type ModelValue<S> = Simplify<
  { -readonly [K in keyof Props<S> as K extends PresentKeys<S> ? K : never]: FieldValue<Props<S>[K]> } & {
    -readonly [K in keyof Props<S> as K extends PresentKeys<S> ? never : K]?: FieldValue<Props<S>[K]>;
  }
>;

export type FromPySchema<S> = S extends { readonly type: 'array'; readonly items: infer I }
  ? ModelValue<I>[]
  : ModelValue<S>;
