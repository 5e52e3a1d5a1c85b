import { AppError } from '../errors.ts';

/**
 * What a bound credential (a key bound to a tenant, a user token) may see: its own tenant's
 * resources. Another tenant's is answered as an unknown one, with the same 404, so that its
 * existence does not leak. `tenant` null: an unbound credential or AUTH_MODE=off, which see all.
 */
export function ownedBy<T extends { readonly user_id: string }>(found: T, tenant: string | null, notFound: string): T {
  if (tenant !== null && found.user_id !== tenant) throw AppError.of('NOT_FOUND', notFound);
  return found;
}

/** A bound credential writes only for its own tenant: anything else is a 403 (the caller knows whose data it sent). */
export function assertActsFor(tenant: string | null, userId: string, what: string): void {
  if (tenant !== null && userId !== tenant)
    throw AppError.of('FORBIDDEN', `This credential may not ${what} for another tenant`);
}

/**
 * The tenant a request is for: the user_id it names (a bound credential may name only its own,
 * else a 403), or else the credential's own tenant; null: none named and any tenant may be seen.
 */
export function requestedTenant(tenant: string | null, named: string | undefined, what: string): string | null {
  if (named === undefined) return tenant;
  assertActsFor(tenant, named, what);
  return named;
}
