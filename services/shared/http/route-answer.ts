import type { JSONSchema } from 'json-schema-to-ts';
import type { ResponseSchema, WireOf } from '../../../schemas/http/response-parts.ts';
import type { TextBody } from './text-body.ts';

export type { ResponseSchema };

/**
 * What a handler may answer, read off its response schema (as Unkey's handlers take theirs from the
 * route's `responses[200]`): the schema's type, a TextBody where the route also answers another media
 * type, streams or answers a file, and nothing for a route without a body (204).
 */
export type AnswerOf<RS> = RS extends { readonly events: readonly string[] } | { readonly files: readonly string[] }
  ? TextBody
  : RS extends { readonly schema: infer S extends JSONSchema }
    ? WireOf<S> | (RS extends { readonly alternatives: readonly string[] } ? TextBody : never)
    : void;

type KeysOf<S> = S extends unknown ? keyof S : never;
type FieldOf<S, K extends PropertyKey> = S extends unknown ? (K extends keyof S ? S[K] : never) : never;

/**
 * The paths (`.events[].model`) of the fields in T that the schema type S lacks, all through T; never
 * when there are none. Assignability alone would let a value with more fields through, which the
 * document would then not describe.
 */
export type ExtraFields<T, S, Path extends string = ''> = unknown extends S
  ? never
  : T extends TextBody | string | number | boolean | bigint | null | undefined | void
    ? never
    : T extends readonly (infer I)[]
      ? ExtraFields<I, S extends readonly (infer J)[] ? J : never, `${Path}[]`>
      : T extends object
        ? {
            [K in keyof T & string]-?: K extends KeysOf<S>
              ? ExtraFields<T[K], FieldOf<S, K>, `${Path}.${K}`>
              : `${Path}.${K}`;
          }[keyof T & string]
        : never;

/** Nothing when the answer R has only fields of A; else a property no declaration has, naming the extra fields. */
export type ExactAnswer<R, A> = [ExtraFields<R, A>] extends [never]
  ? unknown
  : { readonly 'fields the response schema lacks': ExtraFields<R, A> };
