import { createHash } from 'node:crypto';

/**
 * The `webhook-id` of an event: a hash of its type, tenant and the emitter's idempotency key, so that
 * the same crossing fired again (after a restart, a replay, by another process) is the same message and
 * is not delivered as a new one; two tenants' keys never meet.
 */
export function messageIdOf(type: string, userId: string, idempotencyKey: string): string {
  const digest = createHash('sha256').update(`${type}\u0000${userId}\u0000${idempotencyKey}`).digest('base64url');
  return `msg_${digest.slice(0, 32)}`;
}
