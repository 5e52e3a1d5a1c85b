import type { Middleware } from 'koa';
import { currentSignal, untilAborted } from '../abortable.ts';

/**
 * Routes that only append records: they wait for nothing stored before them. A new rate entry reads
 * nothing stored either (its tenant's count is ingest's own, in memory or Redis): waiting made every
 * create of a tenant adding many wait for the round of the one before it.
 */
const APPEND_ONLY = new Set(['POST /api/usage/events', 'POST /api/usage/events/batch', 'POST /api/rates']);
/** Set on an answer that may not show every write acknowledged before its request (the writer is behind). */
export const STALE_READ_HEADER = 'x-callmeter-stale-read';
const OPERATIONAL = new Set(['/healthz', '/health', '/readyz', '/metrics']);

/**
 * The embedded mode answers a write once its records are in the journal, before they are stored; every
 * other request waits until what was acknowledged before it is stored, so that a read (of ClickHouse, of
 * an answer kept in the cache, of the calls' live usage) shows every write answered before it, as when a
 * 201 waited for the insert. Usage posts, the hot path, and new rate entries wait for nothing. A request
 * whose client goes away stops waiting.
 */
export function readAfterWrite(caughtUp: () => Promise<boolean>): Middleware {
  return async (ctx, next) => {
    if (!APPEND_ONLY.has(`${ctx.method} ${ctx.path}`) && !OPERATIONAL.has(ctx.path)) {
      // Behind a stalled writer the request answers from what is stored, and says so.
      if (!(await untilAborted(caughtUp(), currentSignal()))) ctx.set(STALE_READ_HEADER, 'journal');
    }
    await next();
  };
}
