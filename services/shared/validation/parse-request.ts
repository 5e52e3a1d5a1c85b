import { AppError } from '../errors.ts';
import type { RequestParts, RequestSchemas, RequestValidation, ValidatedRequest } from './compile-request.ts';
import type { PyValue } from './py-value.ts';
import { readJsonBody, type RawBody } from './read-json-body.ts';

/**
 * A request's JSON body as Python reads it. Read before any other part is validated, so that its
 * failures win over every other error, as in FastAPI (a bad JSON body is reported before any header
 * or query check). Throws the AppError the error middleware turns into the 400 or the 422.
 */
export function readRequestBody(body: RawBody): PyValue | undefined {
  const read = readJsonBody(body);
  if (read.ok) return read.value;
  if (read.status === 400) throw AppError.of('BAD_REQUEST', read.detail);
  throw AppError.validation(read.items);
}

/** Every part validated at once (the body already read); throws the 422 of all their problems. */
export function validateRequest<S extends RequestSchemas>(
  validate: (parts: RequestParts) => RequestValidation<S>,
  parts: RequestParts,
): ValidatedRequest<S> {
  const result = validate(parts);
  if (!result.ok) throw AppError.validation(result.items);
  return result.value;
}
