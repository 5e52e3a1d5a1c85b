import { AppError, statusOf } from '../../errors.ts';
import type { RequestParts, RequestSchemas, RequestValidation } from '../compile-request.ts';
import type { RawBody } from '../read-json-body.ts';
import { readRequestBody, validateRequest } from '../parse-request.ts';
import { toPythonJson } from '../to-python-json.ts';

export interface RawRequestParts extends Omit<RequestParts, 'body'> {
  /** Omit for routes without a body. */
  readonly body?: RawBody;
}

export interface WireResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * The status and exact body bytes FastAPI would send for these request parts; for a valid
 * request, the validated body (or the whole value when there is no body) in the same encoding.
 */
export function wireResponse<S extends RequestSchemas>(
  validate: (parts: RequestParts) => RequestValidation<S>,
  parts: RawRequestParts,
): WireResponse {
  try {
    // As defineRoute does: the body first, so that its failures win, then every part.
    const body = parts.body === undefined ? undefined : readRequestBody(parts.body);
    const value: Record<string, unknown> = validateRequest(validate, { ...parts, body });
    return { status: 200, body: toPythonJson('body' in value ? value['body'] : value) };
  } catch (error) {
    if (!(error instanceof AppError)) throw error;
    return { status: statusOf(error.code), body: toPythonJson({ detail: error.detail }) };
  }
}

/** A JSON request body as the wire carries it. */
export function jsonBody(text: string, contentType: string | undefined = 'application/json'): RawRequestParts['body'] {
  return { contentType, raw: Buffer.from(text, 'utf8') };
}
