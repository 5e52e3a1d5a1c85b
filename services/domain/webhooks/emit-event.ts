import type { WebhookEventType } from '../../../schemas/records/webhook-endpoint.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import {
  insertDeliveryStates,
  messageExists,
  type DeliveryState,
} from '../../shared/clickhouse/tables/webhook-deliveries.ts';
import type { WebhookEndpoints } from './endpoint-registry.ts';
import { messageIdOf } from './message-id.ts';
import { RETRY_WINDOW_MS } from './retry-schedule.ts';

/** An event to send to the endpoints subscribed to it (docs/webhooks.md). */
export interface WebhookEvent {
  readonly type: WebhookEventType;
  /** The tenant the event is about: endpoints of that tenant, and unbound ones, receive it. */
  readonly user_id: string;
  /** The payload's `data` (budget_id, agent_id, session_id, threshold, amount, spent as decimal strings...). */
  readonly data: Readonly<Record<string, unknown>>;
  /**
   * Names the occurrence, the same each time the emitter fires it again (e.g. `budget:<id>:<period>:<threshold>`):
   * the webhook-id is derived from it, and an emit of a key already emitted is a no-op.
   */
  readonly idempotency_key: string;
}

export interface EmitResult {
  /** The `webhook-id` every attempt of every endpoint carries. */
  readonly message_id: string;
  /** The endpoints it was queued for; 0 when it was a repeat, or nobody subscribes (then nothing was queued). */
  readonly endpoints: number;
  /** The key was emitted before: nothing was queued. */
  readonly duplicate: boolean;
}

export type EmitWebhookEvent = (event: WebhookEvent) => Promise<EmitResult>;

export interface EmitterDeps {
  readonly ch: ClickHouse;
  readonly endpoints: WebhookEndpoints;
  readonly now?: () => number;
}

/**
 * The emit function budgets call: resolves once the message is in the outbox (webhook_deliveries, one row
 * per subscribed endpoint, written in one insert: all or none), durable across a kill -9; the delivery
 * sends it after. A message is queued for the endpoints subscribed when it is first emitted; an emit of
 * the same idempotency key again (a restart, a replay, another process) finds it and queues nothing.
 * Two processes emitting the same key at the same instant both write the same rows (same id, version
 * 1): ReplacingMergeTree keeps one of each.
 */
export function createWebhookEmitter({ ch, endpoints, now = Date.now }: EmitterDeps): EmitWebhookEvent {
  return async ({ type, user_id, data, idempotency_key }) => {
    const message_id = messageIdOf(type, user_id, idempotency_key);
    const receiving = endpoints.receiving(type, user_id);
    // Nobody to send it to: nothing is queued, and nothing asked of the store (most tenants have no endpoint).
    if (receiving.length === 0) return { message_id, endpoints: 0, duplicate: false };
    if (await messageExists(ch, message_id)) return { message_id, endpoints: 0, duplicate: true };
    const at = now();
    const body = JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
    const states: DeliveryState[] = receiving.map((endpoint) => ({
      endpoint_id: endpoint.id,
      message_id,
      user_id,
      type,
      body,
      created_ms: at,
      status: 'pending',
      attempts: 0,
      next_attempt_ms: at,
      deadline_ms: at + RETRY_WINDOW_MS,
      version: 1,
    }));
    await insertDeliveryStates(ch, states);
    return { message_id, endpoints: states.length, duplicate: false };
  };
}
