/**
 * ClickHouse error codes of a read that the server could not answer now: over the read limits every
 * read carries (max_execution_time, max_result_bytes), out of memory, or too busy. Answered 503 with
 * Retry-After, like any dependency that cannot serve, never a 500 that reads as a defect.
 */
const OVER_LIMITS = new Set([
  '159', // TIMEOUT_EXCEEDED
  '160', // TOO_SLOW
  '202', // TOO_MANY_SIMULTANEOUS_QUERIES
  '241', // MEMORY_LIMIT_EXCEEDED
  '396', // TOO_MANY_ROWS_OR_BYTES
]);

// How a socket to a ClickHouse server fails when it is down or restarting.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND']);

/** True when a ClickHouse call failed because the server is down, busy or over a read limit. */
export function clickhouseUnavailable(error: unknown): boolean {
  if (!(error instanceof Error)) return false;
  const code = 'code' in error ? String(error.code) : '';
  if (error.constructor.name === 'ClickHouseError') return OVER_LIMITS.has(code);
  return NETWORK_CODES.has(code) || /^Timeout error\.?$/.test(error.message);
}
