import type { ReadFence } from './read-after-write.ts';
import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import type { Middleware } from 'koa';
import type { Caller } from '../auth/access.ts';
import { OPEN, type Authenticator } from '../auth/authenticator.ts';
import type { Logger } from '../logger.ts';
import { withSignal } from '../abortable.ts';

export interface RequestState {
  requestId: string;
  log: Logger;
  /** Called by each route where FastAPI would run a security dependency: after the body is read, before validation. */
  authenticator: Authenticator;
  /** Takes the request's tokens (per key, per tenant) after authentication; a 429 past them. Answers the RateLimit headers. */
  limit: RequestLimiter;
  /** Aborted when the client goes away before its answer is sent: what the request still waits for is cancelled. */
  clientGone: AbortSignal;
  /** Behind the embedded journal: waits until what was acknowledged before the request is stored (read-after-write.ts). */
  readFence?: ReadFence;
}

export type RequestLimiter = (caller: Caller, tenant: string | null) => Promise<Record<string, string>>;

export const UNLIMITED: RequestLimiter = async () => ({});

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * Gives every request an id (the caller's x-request-id when it is safe to echo), a child logger, and a
 * signal aborted when its client goes away, under which the rest of the request runs (withSignal).
 */
export function requestContext(
  log: Logger,
  authenticator: Authenticator = OPEN,
  limit: RequestLimiter = UNLIMITED,
): Middleware<RequestState> {
  return async (ctx, next) => {
    ctx.state.authenticator = authenticator;
    ctx.state.limit = limit;
    const incoming = ctx.get('x-request-id');
    const requestId = SAFE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
    ctx.state.requestId = requestId;
    ctx.state.log = log.child({ request_id: requestId });
    ctx.set('x-request-id', requestId);
    const gone = new AbortController();
    // Every read of the request listens to it while it waits, removing its listener after: no leak to warn of.
    setMaxListeners(0, gone.signal);
    // The response closes either once sent (finished) or when the connection drops before that.
    ctx.res.once('close', () => {
      if (!ctx.res.writableFinished) gone.abort(new DOMException('The client closed the request', 'AbortError'));
    });
    ctx.state.clientGone = gone.signal;
    await withSignal(gone.signal, next);
  };
}
