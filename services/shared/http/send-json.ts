import type { Context } from 'koa';

/**
 * Writes a JSON body the way Starlette's JSONResponse does: compact, raw UTF-8, and
 * `Content-Type: application/json` without a charset (Koa would add one by itself).
 * `body` may be pre-serialised text, for bodies that need Python's number formatting.
 */
export function sendJson(ctx: Context, status: number, body: unknown, serialized?: string): void {
  ctx.status = status;
  ctx.body = serialized ?? JSON.stringify(body);
  ctx.set('Content-Type', 'application/json');
}
