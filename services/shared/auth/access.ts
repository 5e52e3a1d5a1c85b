import type { ApiKeyScope } from '../../../schemas/records/api-key.ts';

/**
 * What a route needs, declared on the route (defineRoute's `access`):
 * - `ingest`: the workers' writes (sessions, transcripts, telephony, agents, usage);
 * - `read`: cost queries, rates, live cost streams;
 * - `session_read`: reads of sessions, transcripts, agents and numbers, open to workers and readers both;
 * - `admin`: keys, tenants' prices, the audit log.
 */
export type RouteAccess = 'ingest' | 'read' | 'session_read' | 'admin';

/** The workers' data (sessions, transcripts, agents, numbers): read with `session_read`, changed with `ingest`. */
export const WORKER_DATA = { read: 'session_read', change: 'ingest' } as const satisfies {
  readonly read: RouteAccess;
  readonly change: RouteAccess;
};

const SCOPES_OF: { readonly [A in RouteAccess]: readonly ApiKeyScope[] } = {
  ingest: ['ingest', 'admin'],
  read: ['read', 'admin'],
  session_read: ['ingest', 'read', 'admin'],
  admin: ['admin'],
};

export function scopeAllows(scope: ApiKeyScope, access: RouteAccess): boolean {
  return SCOPES_OF[access].includes(scope);
}

/** Who is calling, once authenticated. With AUTH_MODE=off every caller is `anonymous` with every right. */
export interface Caller {
  readonly kind: 'anonymous' | 'key' | 'bootstrap' | 'token';
  /** The key's id, `bootstrap` for ADMIN_API_KEY, the token's tenant, or `anonymous`: the actor in the audit log. */
  readonly id: string;
  readonly scope: ApiKeyScope;
  /** The one tenant (user_id) this credential acts for; null: any (the request's x-user-id). */
  readonly tenant: string | null;
}

export const ANONYMOUS: Caller = Object.freeze({ kind: 'anonymous', id: 'anonymous', scope: 'admin', tenant: null });
