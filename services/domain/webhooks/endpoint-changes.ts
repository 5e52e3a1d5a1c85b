import type { WebhookEndpointRecord } from '../../../schemas/records/webhook-endpoint.ts';
import { newWebhookSecret } from './signature.ts';

/** How long the previous secret keeps signing after a rotation: receivers have this long to switch. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;

/** The actor of the audit entry of an endpoint the delivery disabled. */
export const DELIVERY_ACTOR_ID = 'webhook-delivery';

/** The next version of an endpoint with a new current secret; the previous one signs until `now + overlap`. */
export function rotatedEndpoint(endpoint: WebhookEndpointRecord, nowMs: number): WebhookEndpointRecord {
  const previous = {
    secret: endpoint.secrets[0]!.secret,
    expires_at: new Date(nowMs + ROTATION_OVERLAP_MS).toISOString(),
  };
  return {
    ...endpoint,
    secrets: [{ secret: newWebhookSecret(), expires_at: null }, previous],
    version: endpoint.version + 1,
  };
}

/** What an audit entry says of an endpoint: everything but its secrets. */
export function auditedEndpoint({ secrets: _secrets, ...endpoint }: WebhookEndpointRecord): Record<string, unknown> {
  return endpoint;
}
