import type { Middleware } from 'koa';
import { AppError } from '../errors.ts';

/** The usage routes, which take most of what is posted: gated before their bodies are read. */
const GATED = new Set(['POST /api/usage/events', 'POST /api/usage/events/batch']);

/**
 * While the embedded journal holds as many unstored records as it may (`full`), usage posts are
 * answered the 503 their publish would get, before their bodies are read, parsed, validated and
 * priced: a client retrying a refused batch of 500 as fast as it can otherwise took the main thread
 * from the writer that frees the journal (storing fell from about 7,000 to 2,000 events a second
 * under such retries). Checked before credentials: the answer says only to come back in a second.
 */
export function backlogGate(full: () => boolean): Middleware {
  return async (ctx, next) => {
    if (full() && GATED.has(`${ctx.method} ${ctx.path}`))
      throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Too many records waiting to be stored, try again', {
        headers: { 'Retry-After': '1' },
      });
    return next();
  };
}
