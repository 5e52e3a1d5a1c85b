import type { Middleware } from 'koa';
import { clickhouseUnavailable } from '../clickhouse/read-failure.ts';
import { AppError, statusOf } from '../errors.ts';
import type { RequestState } from './request-context.ts';
import { sendJson } from './send-json.ts';
import { toPythonJson } from '../validation/to-python-json.ts';

/**
 * Registered first: turns every thrown error into the wire format the existing clients know.
 * AppErrors carry their own detail, except INTERNAL ones: every 500 is the same generic body with
 * the request id, its details (ids, revisions, buckets) only in the log.
 */
export function errorMiddleware(): Middleware<RequestState> {
  return async (ctx, next) => {
    try {
      await next();
    } catch (error) {
      if (ctx.state.clientGone?.aborted && abandoned(error, ctx.state.clientGone)) {
        // Nobody reads this answer: what the request waited for was cancelled because its client left.
        ctx.state.log.info({ reason: String(error) }, 'request_abandoned');
        sendJson(ctx, 503, { detail: 'The client closed the request' });
        return;
      }
      if (error instanceof AppError && error.code !== 'INTERNAL') {
        // Every 503 and 429 tells the client when to retry, whichever dependency or queue refused.
        if (error.code === 'DEPENDENCY_UNAVAILABLE' || error.code === 'TOO_MANY_REQUESTS') ctx.set('Retry-After', '1');
        ctx.set(error.headers);
        const body = { detail: error.detail };
        // Validation items echo the input as Python re-encodes it (2.0, 1e+16, big integers).
        sendJson(ctx, statusOf(error.code), body, error.code === 'VALIDATION' ? toPythonJson(body) : undefined);
        if (error.code === 'DEPENDENCY_UNAVAILABLE') {
          ctx.state.log.warn({ err: error.cause ?? error, code: error.code }, 'request_failed');
        }
        return;
      }
      if (clickhouseUnavailable(error)) {
        ctx.state.log.warn({ err: error }, 'request_failed_clickhouse_unavailable');
        ctx.set('Retry-After', '1');
        sendJson(ctx, 503, { detail: 'Database unavailable, try again' });
        return;
      }
      ctx.state.log.error({ err: error }, 'request_unhandled_error');
      sendJson(ctx, 500, { detail: 'Internal Server Error', request_id: ctx.state.requestId });
    }
  };
}

/** Whether an error is the cancellation of what the request waited for, its client gone. */
function abandoned(error: unknown, gone: AbortSignal): boolean {
  return (
    error === gone.reason ||
    (error instanceof Error && (error.name === 'AbortError' || /\baborted\b/i.test(error.message)))
  );
}
