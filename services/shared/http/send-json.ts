import type { Context } from 'koa';

/**
 * Writes a JSON body the way Starlette's JSONResponse does: compact, raw UTF-8, and
 * `Content-Type: application/json` without a charset (Koa would add one by itself).
 * `body` may be pre-serialised text, for bodies that need Python's number formatting.
 */
export function sendJson(ctx: Context, status: number, body: unknown, serialized?: string): void {
  ctx.status = status;
  ctx.body = serialized ?? jsonOf(body);
  ctx.set('Content-Type', 'application/json');
}

/** The JSON bytes of answers sent unchanged to many requests (see sentUnchanged), written on the first. */
const written = new WeakMap<object, Buffer | null>();

/**
 * Marks an answer that many requests will be sent as it is (the query service's cached answers): it
 * must be frozen all through, since its JSON is written and encoded once and sent again for every request.
 */
export function sentUnchanged<T extends object>(answer: T): T {
  if (!written.has(answer)) written.set(answer, null);
  return answer;
}

function jsonOf(body: unknown): string | Buffer {
  if (body === null || typeof body !== 'object' || !written.has(body)) return JSON.stringify(body);
  let bytes = written.get(body);
  if (bytes == null) written.set(body, (bytes = Buffer.from(JSON.stringify(body), 'utf8')));
  return bytes;
}
