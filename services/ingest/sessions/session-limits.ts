import type { JsonObject } from './session.ts';

/**
 * The most session_data may hold, as JSON text in UTF-8. Every change publishes the whole session
 * as one record, and PATCH metadata merges into session_data, so without a bound a session could
 * grow until its record no longer fits a Kafka request (about 1 MiB) and every later change of it
 * failed.
 */
export const MAX_SESSION_DATA_BYTES = 64 * 1024;

/**
 * analysis (a PATCH replaces it whole) is bounded like session_data for the same reason. With the
 * maxLength of the string fields (schemas/http/session-*.ts), the largest session a client can
 * build stays far below one Kafka request: session-record.test.ts measures it.
 */
export const MAX_ANALYSIS_BYTES = 64 * 1024;

/** The JSON fields of a session whose size the client decides. */
export type BoundedJsonField = 'session_data' | 'analysis';

export const MAX_JSON_BYTES: Readonly<Record<BoundedJsonField, number>> = {
  session_data: MAX_SESSION_DATA_BYTES,
  analysis: MAX_ANALYSIS_BYTES,
};

export function jsonBytes(value: JsonObject): number {
  return Buffer.byteLength(JSON.stringify(value));
}

/** A field over its bound, with the bytes it would take. */
export interface OversizedField {
  readonly field: BoundedJsonField;
  readonly bytes: number;
}

/** The field's size when it passes its bound, else null. */
export function oversized(field: BoundedJsonField, value: JsonObject): OversizedField | null {
  const bytes = jsonBytes(value);
  return bytes > MAX_JSON_BYTES[field] ? { field, bytes } : null;
}
