import { randomUUID } from 'node:crypto';
import type { AuditRecord } from '../../schemas/records/api-key.ts';
import type { WebhookEndpointRecord } from '../../schemas/records/webhook-endpoint.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { insertRows } from '../shared/clickhouse/insert-rows.ts';
import { auditRow } from '../shared/clickhouse/tables/audit-log.ts';
import { webhookEndpointRow } from '../shared/clickhouse/tables/webhook-endpoints.ts';
import { auditedEndpoint, DELIVERY_ACTOR_ID, type WebhookEndpoints } from '../domain/webhooks/index.ts';

/**
 * Disables an endpoint that failed for days: its next version and the audit entry (`webhook_disabled`,
 * actor `webhook-delivery`) are stored by the delivering process itself, which writes ClickHouse (it is
 * the consumer, which has no producer of records when Kafka carries them); the insert tokens make a
 * repeat of the same change a no-op.
 */
export async function disableEndpoint(
  writes: ClickHouse,
  endpoints: WebhookEndpoints,
  endpoint: WebhookEndpointRecord,
  reason: string,
  nowMs = Date.now(),
): Promise<void> {
  const at = new Date(nowMs).toISOString();
  const disabled: WebhookEndpointRecord = {
    ...endpoint,
    disabled_at: at,
    disabled_reason: reason,
    version: endpoint.version + 1,
  };
  const recordId = randomUUID();
  const audit: AuditRecord = {
    id: recordId,
    action: 'webhook_disabled',
    subject_id: endpoint.id,
    actor_key_id: DELIVERY_ACTOR_ID,
    user_id: endpoint.user_id,
    at,
    detail: JSON.stringify(auditedEndpoint(disabled)),
  };
  const token = `webhook-disabled:${endpoint.id}:${disabled.version}`;
  await insertRows(writes, 'webhookEndpoints', [webhookEndpointRow(disabled, recordId)], token);
  await insertRows(writes, 'auditLog', [auditRow(audit, recordId)], token);
  endpoints.note(disabled);
}
