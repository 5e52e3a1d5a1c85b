import { randomUUID } from 'node:crypto';
import type { WebhookCreateBody, webhookSchema } from '../../../schemas/http/webhooks.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import type { AuditRecord } from '../../../schemas/records/api-key.ts';
import type { WebhookEndpointRecord } from '../../../schemas/records/webhook-endpoint.ts';
import type { Caller } from '../../shared/auth/access.ts';
import { auditEnvelope } from '../../shared/auth/audit.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { insertDeliveryStates, readDelivery } from '../../shared/clickhouse/tables/webhook-deliveries.ts';
import { AppError } from '../../shared/errors.ts';
import { makeEnvelope, type RecordSink } from '../../domain/records/index.ts';
import {
  auditedEndpoint,
  deliveryLog,
  newWebhookSecret,
  rotatedEndpoint,
  webhookUrlProblem,
  type DeliveryView,
  type Resolve,
  type WebhookEndpoints,
} from '../../domain/webhooks/index.ts';

export interface WebhookServiceDeps {
  readonly endpoints: WebhookEndpoints;
  readonly sink: RecordSink;
  /** The outbox (webhook_deliveries, webhook_attempts): its log is read and a redelivery written here. */
  readonly outbox: ClickHouse;
  /** WEBHOOK_ALLOW_PRIVATE=1: any address may be registered. */
  readonly allowPrivate: boolean;
  readonly resolve?: Resolve;
  readonly now?: () => number;
}

export type WebhookView = WireOf<typeof webhookSchema>;

const NOT_FOUND = 'Webhook not found';

/**
 * Webhook endpoints (docs/webhooks.md): each change is a version of the endpoint on the record path
 * (webhook_endpoints) with its audit record beside it, known to this process at once and to every other
 * within 2 s. An admin bound to a tenant registers and sees that tenant's endpoints only.
 */
export function createWebhookService({
  endpoints,
  sink,
  outbox,
  allowPrivate,
  resolve,
  now = Date.now,
}: WebhookServiceDeps) {
  async function publish(endpoint: WebhookEndpointRecord, action: AuditRecord['action'], actor: Caller) {
    const at = new Date(now());
    const key = `webhook:${endpoint.id}`;
    await sink.publish([
      makeEnvelope('webhook_endpoint', key, endpoint, at, at),
      auditEnvelope(
        { action, subject_id: endpoint.id, actor, user_id: endpoint.user_id, at, detail: auditedEndpoint(endpoint) },
        key,
      ),
    ]);
    endpoints.note(endpoint);
  }

  /** The endpoint, if the caller may see it: another tenant's is an unknown one. */
  function find(id: string, caller: Caller): WebhookEndpointRecord {
    const endpoint = endpoints.latest(id);
    if (endpoint === null || endpoint.deleted_at !== null) throw AppError.of('NOT_FOUND', NOT_FOUND);
    if (caller.tenant !== null && endpoint.user_id !== caller.tenant) throw AppError.of('NOT_FOUND', NOT_FOUND);
    return endpoint;
  }

  return {
    async create(body: WebhookCreateBody, caller: Caller): Promise<WebhookView & { secret: string }> {
      if (body.user_id !== undefined) assertActsFor(caller.tenant, body.user_id, 'register webhooks');
      const problem = await webhookUrlProblem(body.url, {
        allowPrivate,
        ...(resolve === undefined ? {} : { resolve }),
      });
      if (problem !== null)
        throw AppError.validation([
          {
            type: 'value_error',
            loc: ['body', 'url'],
            msg: `Value error, the URL ${problem}`,
            input: body.url,
            ctx: { error: {} },
          },
        ]);
      const secret = newWebhookSecret();
      const endpoint: WebhookEndpointRecord = {
        id: randomUUID(),
        user_id: body.user_id ?? caller.tenant,
        url: body.url,
        events: [...new Set(body.events)],
        description: body.description ?? null,
        secrets: [{ secret, expires_at: null }],
        created_at: new Date(now()).toISOString(),
        disabled_at: null,
        disabled_reason: null,
        deleted_at: null,
        version: 1,
      };
      await publish(endpoint, 'webhook_created', caller);
      return { ...viewOf(endpoint), secret };
    },

    list: (caller: Caller): WebhookView[] =>
      endpoints
        .all()
        .filter((endpoint) => caller.tenant === null || endpoint.user_id === caller.tenant)
        .map(viewOf),

    get: (id: string, caller: Caller): WebhookView => viewOf(find(id, caller)),

    async remove(id: string, caller: Caller): Promise<void> {
      const endpoint = find(id, caller);
      const deleted = { ...endpoint, deleted_at: new Date(now()).toISOString(), version: endpoint.version + 1 };
      await publish(deleted, 'webhook_deleted', caller);
    },

    /** A new secret, in this answer only; the previous one keeps signing for ROTATION_OVERLAP_MS. */
    async rotate(id: string, caller: Caller) {
      const rotated = rotatedEndpoint(find(id, caller), now());
      await publish(rotated, 'webhook_secret_rotated', caller);
      return { id, secret: rotated.secrets[0]!.secret, previous_secret_expires_at: rotated.secrets[1]!.expires_at! };
    },

    async deliveries(id: string, caller: Caller, limit: number): Promise<DeliveryView[]> {
      find(id, caller);
      return deliveryLog(outbox, id, limit);
    },

    /**
     * Sends a message again, whatever became of it (delivered, given up, pending): one attempt as soon as
     * the delivery sees it, with the same webhook-id and body; if it fails the message is given up again.
     */
    async redeliver(id: string, messageId: string, caller: Caller) {
      const endpoint = find(id, caller);
      if (endpoint.disabled_at !== null)
        throw AppError.of(
          'CONFLICT',
          `Webhook ${id} is disabled (${endpoint.disabled_reason ?? 'failing'}): nothing is sent to it`,
        );
      const state = await readDelivery(outbox, id, messageId);
      if (state === null) throw AppError.of('NOT_FOUND', 'Message not found');
      const at = now();
      await insertDeliveryStates(outbox, [
        { ...state, status: 'pending', next_attempt_ms: at, deadline_ms: at, version: Math.max(state.version + 1, at) },
      ]);
      return { message_id: messageId, status: 'pending' as const, next_attempt_at: new Date(at).toISOString() };
    },
  };
}

export type WebhookService = ReturnType<typeof createWebhookService>;

function viewOf(endpoint: WebhookEndpointRecord): WebhookView {
  return {
    id: endpoint.id,
    url: endpoint.url,
    events: endpoint.events,
    description: endpoint.description,
    user_id: endpoint.user_id,
    status: endpoint.disabled_at === null ? 'enabled' : 'disabled',
    created_at: endpoint.created_at,
    disabled_at: endpoint.disabled_at,
    disabled_reason: endpoint.disabled_reason,
  };
}
