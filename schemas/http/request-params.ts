import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';

/**
 * `x_user_id: str = Header()`: absent is a `missing` item at ["header", "x-user-id"] with
 * `input: null`; an empty value is a valid string.
 */
export const userIdHeaders = {
  type: 'object',
  properties: { 'x-user-id': { 'x-py': 'str' } },
  required: ['x-user-id'],
} as const satisfies ModelSchema;

export type UserIdHeaders = FromPySchema<typeof userIdHeaders>;

/**
 * For routes that answer an absent or empty header with 401 `User ID required` themselves
 * (the cost and session-list routes, after their query is validated).
 */
export const optionalUserIdHeaders = {
  type: 'object',
  properties: { 'x-user-id': { 'x-py': 'str' } },
} as const satisfies ModelSchema;

export type OptionalUserIdHeaders = FromPySchema<typeof optionalUserIdHeaders>;

/**
 * A path template's parameters (`{session_id}`, `{room_name}`…): each a plain `str`, so no value can
 * fail (Starlette's `[^/]+`, percent-decoded). defineRoute reads them off the route's path.
 */
export interface PathParamsSchema<N extends string> extends ModelSchema {
  readonly properties: { readonly [K in N]: { readonly 'x-py': 'str' } };
  readonly required: readonly N[];
}

export function pathParams<const N extends string>(names: readonly N[]): PathParamsSchema<N> {
  const properties = Object.fromEntries(names.map((name) => [name, { 'x-py': 'str' } as const]));
  return { type: 'object', properties: properties as PathParamsSchema<N>['properties'], required: names };
}

/** `{session_id}` as defineRoute reads it off a path: a plain `str`, so no value can fail. */
export const sessionIdPath = pathParams(['session_id']);
