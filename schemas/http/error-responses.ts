import { arrayOf, closedObject, text } from './response-parts.ts';

/**
 * The error bodies every client knows (fastapi-compat.md): a 422's list of validation items, and
 * `{"detail": "…"}` for every other error.
 */

/** One problem of a request, as pydantic reports it (`ctx` only where the check has parameters). */
export const validationItemSchema = closedObject(
  {
    type: text,
    loc: arrayOf({ anyOf: [{ type: 'string' }, { type: 'integer' }] }),
    msg: text,
    input: { description: 'the value refused, as sent' },
    ctx: { type: 'object', additionalProperties: true },
  },
  { optional: ['ctx'], title: 'ValidationError' },
);

export const validationErrorSchema = closedObject(
  { detail: arrayOf(validationItemSchema) },
  { title: 'HTTPValidationError' },
);

export const errorDetailSchema = closedObject({ detail: text }, { title: 'ErrorDetail' });
