import { AsyncLocalStorage } from 'node:async_hooks';
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
 * Whether what was acknowledged before the call is stored (false: the writer is behind, the answer
 * may not show all of it). With a tenant, only that tenant's records and those of no tenant count.
 */
export type JournalFence = (tenant: string | null) => Promise<boolean>;

/** Waits as its route says: for every tenant's acknowledged records (null), or for one tenant's. */
export type ReadFence = (tenant: string | null) => Promise<void>;

/** Whose records the reads of the request running now must see: null, everyone's. */
interface ReadScope {
  tenant: string | null;
}

const scopes = new AsyncLocalStorage<ReadScope>();

/** The tenant the running request's reads wait for, once its route has said (null: every tenant, or no request). */
export function readTenant(): string | null {
  return scopes.getStore()?.tenant ?? null;
}

/** Whether a request is running now (a client waits for the read), rather than a refresh in the background. */
export function inRequest(): boolean {
  return scopes.getStore() !== undefined;
}

/**
 * The embedded mode answers a write once its records are in the journal, before they are stored; every
 * other request's route waits (`state.readFence`, called by defineRoute once it knows the caller) until
 * what was acknowledged before it is stored, so that a read (of ClickHouse, of an answer kept in the
 * cache, of the calls' live usage) shows every write answered before it, as when a 201 waited for the
 * insert. A route whose every read is of its caller's tenant waits only for that tenant's records (and
 * those of no tenant): one tenant's writes never hold another's reads. Usage posts, the hot path, and
 * new rate entries wait for nothing. A request whose client goes away stops waiting.
 */
export function readAfterWrite(caughtUp: JournalFence): Middleware {
  return async (ctx, next) => {
    if (OPERATIONAL.has(ctx.path)) return next();
    // Its reads (if any) wait for every tenant's records, as a request's (inRequest) do.
    if (APPEND_ONLY.has(`${ctx.method} ${ctx.path}`)) return scopes.run({ tenant: null }, next);
    const scope: ReadScope = { tenant: null };
    const fence: ReadFence = async (tenant) => {
      scope.tenant = tenant;
      // Behind a stalled writer the request answers from what is stored, and says so.
      if (!(await untilAborted(caughtUp(tenant), currentSignal()))) ctx.set(STALE_READ_HEADER, 'journal');
    };
    (ctx.state as { readFence?: ReadFence }).readFence = fence;
    await scopes.run(scope, next);
  };
}
