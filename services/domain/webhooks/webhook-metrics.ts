import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export interface WebhookMetrics {
  readonly registry: Registry;
  /** Every attempt, by result: ok (a 2xx) or failed (anything else, no answer included). */
  readonly attempts: Counter<'result'>;
  /** Messages whose delivery ended, by status: delivered, or failed (given up after the retry window). */
  readonly deliveries: Counter<'status'>;
  readonly latency: Histogram<'result'>;
  /** Seconds since the oldest message still pending was emitted; 0 when none is. */
  readonly oldestPending: Gauge;
  readonly disabled: Counter;
}

/** The delivery's metrics, served on /metrics by the process that delivers. */
export function createWebhookMetrics(): WebhookMetrics {
  const registry = new Registry();
  return {
    registry,
    attempts: new Counter({
      name: 'webhook_attempts_total',
      help: 'Webhook delivery attempts, by result (ok: a 2xx; failed: anything else)',
      labelNames: ['result'] as const,
      registers: [registry],
    }),
    deliveries: new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook messages whose delivery ended, by status (delivered; failed: given up after the retry window)',
      labelNames: ['status'] as const,
      registers: [registry],
    }),
    latency: new Histogram({
      name: 'webhook_attempt_duration_seconds',
      help: 'Webhook attempt latency, by result',
      labelNames: ['result'] as const,
      buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    oldestPending: new Gauge({
      name: 'webhook_outbox_oldest_pending_seconds',
      help: 'Age of the oldest webhook message not yet delivered nor given up (0: none pending)',
      registers: [registry],
    }),
    disabled: new Counter({
      name: 'webhook_endpoints_disabled_total',
      help: 'Webhook endpoints disabled after failing for days',
      registers: [registry],
    }),
  };
}
