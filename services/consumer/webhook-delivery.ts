import type { Registry } from 'prom-client';
import type { Config } from '../shared/config.ts';
import type { Infrastructure } from '../shared/infrastructure.ts';
import type { Shutdown } from '../shared/lifecycle.ts';
import type { Logger } from '../shared/logger.ts';
import {
  createWebhookEmitter,
  createWebhookMetrics,
  DeliveryWorker,
  MemoryDeliveryClaims,
  RedisDeliveryClaims,
  type EmitWebhookEvent,
  type WebhookEndpoints,
} from '../domain/webhooks/index.ts';
import { disableEndpoint } from './webhook-disable.ts';

export interface WebhookDeliveryDeps {
  readonly config: Config;
  /** Without the journal's fence: the outbox is not on the record path, and the writer's process must not wait for itself. */
  readonly infra: Infrastructure;
  readonly endpoints: WebhookEndpoints;
  readonly log: Logger;
  readonly shutdown: Shutdown;
}

export interface StartedWebhookDelivery {
  /** What budgets call (docs/webhooks.md): the message is in the outbox when it resolves, and sent at once. */
  readonly emit: EmitWebhookEvent;
  readonly metrics: Registry;
}

/**
 * The process that runs the consumer delivers webhooks: the outbox is written by its emitter and read by
 * its worker on its own ClickHouse connection (the ingest reads', not the writer's, so that polls do not
 * wait behind inserts of usage). With REDIS_URL each attempt holds a claim in Redis, so that several
 * consumer processes deliver side by side without sending a message twice at once; else in memory.
 */
export function startWebhookDelivery({
  config,
  infra,
  endpoints,
  log,
  shutdown,
}: WebhookDeliveryDeps): StartedWebhookDelivery {
  const metrics = createWebhookMetrics();
  const ch = infra.clickhouseIngestReads;
  // A claim outlives the longest attempt and its two inserts by far; a killed process's claim expires.
  const claimTtlMs = config.webhooks.timeoutMs + 60_000;
  const claims =
    infra.redis === null || config.redis === null
      ? new MemoryDeliveryClaims()
      : new RedisDeliveryClaims(infra.redis, config.redis.keyPrefix, claimTtlMs);
  const worker = new DeliveryWorker({
    ch,
    endpoints,
    claims,
    metrics,
    log: log.child({ component: 'webhooks' }),
    settings: config.webhooks,
    disable: (endpoint, reason) => disableEndpoint(infra.clickhouse, endpoints, endpoint, reason),
  });
  worker.start();
  shutdown.add('webhook-delivery', () => worker.stop());
  const emitter = createWebhookEmitter({ ch, endpoints });
  const emit: EmitWebhookEvent = async (event) => {
    const result = await emitter(event);
    if (result.endpoints > 0) worker.wake();
    return result;
  };
  return { emit, metrics: metrics.registry };
}
