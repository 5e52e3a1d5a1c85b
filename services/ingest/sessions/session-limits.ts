import type { JsonObject } from './session.ts';

/**
 * The most a session's session_data may hold, as JSON text in UTF-8. Every change publishes the
 * whole session as one record, and PATCH metadata merges into session_data, so without a bound a
 * session could grow until its record no longer fits a Kafka request (about 1 MiB) and every
 * later change of it failed. 64 KiB leaves room for the other fields (including analysis) and
 * the envelope far below that.
 */
export const MAX_SESSION_DATA_BYTES = 64 * 1024;

export function sessionDataBytes(data: JsonObject): number {
  return Buffer.byteLength(JSON.stringify(data));
}
