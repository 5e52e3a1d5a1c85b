import type { Logger } from '../../shared/logger.ts';
import type { EventClaims } from '../usage/event-claims.ts';
import type { DecidedUsage } from '../usage/usage-rows.ts';

/**
 * Step 5, release: the round is in every table, so its claims are let go and a later copy of its events
 * is answered by the stored-id lookup. A release Redis refuses is left to the claims' TTL; it never
 * fails the round. On a cluster the stored-id lookup may read a replica that has not fetched the round's
 * part yet: the claims then stay for their TTL (`onCluster`), which catches a client's copy whatever the
 * replicas' lag.
 */
export async function releaseClaims(
  claims: EventClaims | null,
  claimed: DecidedUsage['claimed'],
  { onCluster, log }: { readonly onCluster: boolean; readonly log: Logger },
): Promise<void> {
  if (claims === null || onCluster) return;
  await Promise.all(claimed.map(({ token, keys }) => claims.release(keys, token))).catch((error: unknown) => {
    log.warn({ err: error }, 'usage_claims_not_released');
  });
}
