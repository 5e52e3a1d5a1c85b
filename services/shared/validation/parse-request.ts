import { AppError } from '../errors.ts';
import type { RequestParts, RequestSchemas, RequestValidation, ValidatedRequest } from './compile-request.ts';
import { readJsonBody, type RawBody } from './read-json-body.ts';

export interface RawRequestParts extends Omit<RequestParts, 'body'> {
  /** Omit for routes without a body. */
  readonly body?: RawBody;
}

/**
 * What a route calls: the body is read first and its failures win over every other error, as in
 * FastAPI (a bad JSON body is reported before any header or query check); then every part is
 * validated. Throws the AppError the error middleware turns into the 400 or the 422.
 */
export function parseRequest<S extends RequestSchemas>(validate: (parts: RequestParts) => RequestValidation<S>, parts: RawRequestParts): ValidatedRequest<S> {
  let body;
  if (parts.body !== undefined) {
    const read = readJsonBody(parts.body);
    if (!read.ok) throw read.status === 400 ? AppError.of('BAD_REQUEST', read.detail) : AppError.validation(read.items);
    body = read.value;
  }
  const result = validate({ ...parts, body });
  if (!result.ok) throw AppError.validation(result.items);
  return result.value;
}
