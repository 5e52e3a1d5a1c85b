/** The webhooks module's public surface (docs/webhooks.md): code outside services/domain/webhooks imports from here only. */
export { refusedRange, webhookUrlProblem, type Resolve } from './address-policy.ts';
export { MemoryDeliveryClaims, RedisDeliveryClaims, type DeliveryClaims } from './delivery-claims.ts';
export { deliveryLog, type DeliveryView } from './delivery-log.ts';
export { DeliveryWorker, type DeliverySettings } from './delivery-worker.ts';
export { createWebhookEmitter, type EmitResult, type EmitWebhookEvent, type WebhookEvent } from './emit-event.ts';
export { auditedEndpoint, DELIVERY_ACTOR_ID, rotatedEndpoint, ROTATION_OVERLAP_MS } from './endpoint-changes.ts';
export { WebhookEndpoints } from './endpoint-registry.ts';
export { messageIdOf } from './message-id.ts';
export { nextAttemptAt, retryCeilingMs, RETRY_WINDOW_MS, DISABLE_AFTER_MS } from './retry-schedule.ts';
export { newWebhookSecret, signatureHeader } from './signature.ts';
export { createWebhookMetrics, type WebhookMetrics } from './webhook-metrics.ts';
