import type { WebhookEndpointRecord } from '../../../schemas/records/webhook-endpoint.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import {
  failingSince,
  insertAttempt,
  insertDeliveryStates,
  oldestPendingMs,
  readDelivery,
  readDueDeliveries,
  type DeliveryState,
} from '../../shared/clickhouse/tables/webhook-deliveries.ts';
import type { Logger } from '../../shared/logger.ts';
import type { Resolve } from './address-policy.ts';
import type { DeliveryClaims } from './delivery-claims.ts';
import type { WebhookEndpoints } from './endpoint-registry.ts';
import { DISABLE_AFTER_MS, nextAttemptAt } from './retry-schedule.ts';
import { sendWebhook, type AttemptOutcome } from './send-webhook.ts';
import type { WebhookMetrics } from './webhook-metrics.ts';

export interface DeliverySettings {
  readonly allowPrivate: boolean;
  readonly timeoutMs: number;
  readonly pollMs: number;
  readonly retryBaseMs: number;
}

export interface DeliveryWorkerDeps {
  /** The outbox's handle (webhook_deliveries, webhook_attempts). */
  readonly ch: ClickHouse;
  readonly endpoints: WebhookEndpoints;
  readonly claims: DeliveryClaims;
  readonly metrics: WebhookMetrics;
  readonly log: Logger;
  readonly settings: DeliverySettings;
  /** Stores the endpoint's disabled version and its audit entry. */
  readonly disable: (endpoint: WebhookEndpointRecord, reason: string) => Promise<void>;
  readonly resolve?: Resolve;
  readonly now?: () => number;
}

/** Attempts in flight at once, all endpoints together, and for one endpoint. */
const MAX_IN_FLIGHT = 64;
const MAX_IN_FLIGHT_PER_ENDPOINT = 4;
const DUE_BATCH = 256;

/**
 * Delivers the outbox: every `pollMs` (or at once after an emit, `wake`) it reads the pending messages
 * due and starts an attempt for each it may, without waiting for the attempts of the pass before: a slow
 * receiver holds up its own messages (at most MAX_IN_FLIGHT_PER_ENDPOINT at a time), never another's.
 * Each attempt runs under a claim, re-reads its message (another process may have sent it meanwhile),
 * stores the attempt in the log and then the message's next state (delivered, the next try, or failed).
 */
export class DeliveryWorker {
  private readonly inFlight = new Set<string>();
  private readonly perEndpoint = new Map<string, number>();
  private readonly running = new Set<Promise<void>>();
  /** Endpoints being disabled here: two failed attempts ending together disable once. */
  private readonly disabling = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private passing = false;
  private again = false;
  private stopped = false;
  private readonly now: () => number;

  constructor(private readonly deps: DeliveryWorkerDeps) {
    this.now = deps.now ?? Date.now;
  }

  start(): void {
    this.timer = setInterval(() => this.wake(), this.deps.settings.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Stops starting attempts and waits for those in flight (each ends within the timeout). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearInterval(this.timer);
    await Promise.allSettled([...this.running]);
  }

  /** Looks for due messages now (after an emit, so that it is sent without waiting for the next poll). */
  wake(): void {
    if (this.stopped) return;
    if (this.passing) {
      this.again = true;
      return;
    }
    this.passing = true;
    this.pass()
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'webhook_delivery_pass_failed'))
      .finally(() => {
        this.passing = false;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** One pass: the due messages, each started unless its endpoint or the process is at its limit. */
  async pass(): Promise<void> {
    const { ch, endpoints, metrics } = this.deps;
    const active = endpoints.active().map((endpoint) => endpoint.id);
    const nowMs = this.now();
    const oldest = await oldestPendingMs(ch, active);
    metrics.oldestPending.set(oldest === null ? 0 : Math.max(0, (nowMs - oldest) / 1000));
    for (const state of await readDueDeliveries(ch, active, nowMs, DUE_BATCH)) {
      const key = `${state.endpoint_id}:${state.message_id}`;
      const endpointLoad = this.perEndpoint.get(state.endpoint_id) ?? 0;
      if (this.inFlight.has(key) || endpointLoad >= MAX_IN_FLIGHT_PER_ENDPOINT) continue;
      if (this.inFlight.size >= MAX_IN_FLIGHT || this.stopped) break;
      this.inFlight.add(key);
      this.perEndpoint.set(state.endpoint_id, endpointLoad + 1);
      const attempt = this.attempt(state)
        .catch((error: unknown) =>
          this.deps.log.warn({ err: error, message_id: state.message_id }, 'webhook_attempt_not_stored'),
        )
        .finally(() => {
          this.inFlight.delete(key);
          this.perEndpoint.set(state.endpoint_id, (this.perEndpoint.get(state.endpoint_id) ?? 1) - 1);
          this.running.delete(attempt);
        });
      this.running.add(attempt);
    }
  }

  private async attempt(due: DeliveryState): Promise<void> {
    const { ch, claims } = this.deps;
    const token = await claims.claim(due.endpoint_id, due.message_id);
    if (token === null) return;
    try {
      const state = await readDelivery(ch, due.endpoint_id, due.message_id);
      // Sent or rescheduled by another process since the pass read it: that version is the one to follow.
      if (state === null || state.version !== due.version || state.status !== 'pending') return;
      const endpoint = this.deps.endpoints.latest(state.endpoint_id);
      if (endpoint === null || endpoint.deleted_at !== null || endpoint.disabled_at !== null) return;
      const outcome = await this.send(endpoint, state);
      await this.record(endpoint, state, outcome);
    } finally {
      await claims.release(due.endpoint_id, due.message_id, token);
    }
  }

  private send(endpoint: WebhookEndpointRecord, state: DeliveryState): Promise<AttemptOutcome> {
    const nowMs = this.now();
    const secrets = endpoint.secrets
      .filter((secret) => secret.expires_at === null || Date.parse(secret.expires_at) > nowMs)
      .map((secret) => secret.secret);
    const { allowPrivate, timeoutMs } = this.deps.settings;
    return sendWebhook({
      url: endpoint.url,
      messageId: state.message_id,
      body: state.body,
      secrets,
      timeoutMs,
      allowPrivate,
      ...(this.deps.resolve === undefined ? {} : { resolve: this.deps.resolve }),
    });
  }

  private async record(endpoint: WebhookEndpointRecord, state: DeliveryState, outcome: AttemptOutcome): Promise<void> {
    const { ch, metrics, settings } = this.deps;
    const nowMs = this.now();
    const attempt = state.attempts + 1;
    await insertAttempt(ch, {
      endpoint_id: endpoint.id,
      message_id: state.message_id,
      attempt,
      at_ms: nowMs,
      ...outcome,
    });
    const next = outcome.ok
      ? null
      : nextAttemptAt({ attempt, nowMs, deadlineMs: state.deadline_ms, baseMs: settings.retryBaseMs });
    const status = outcome.ok ? 'delivered' : next === null ? 'failed' : 'pending';
    await insertDeliveryStates(ch, [
      { ...state, status, attempts: attempt, next_attempt_ms: next, version: Math.max(state.version + 1, nowMs) },
    ]);
    const result = outcome.ok ? 'ok' : 'failed';
    metrics.attempts.inc({ result });
    metrics.latency.observe({ result }, outcome.latency_ms / 1000);
    if (status !== 'pending') metrics.deliveries.inc({ status });
    if (!outcome.ok) await this.disableIfFailingForDays(endpoint);
  }

  private async disableIfFailingForDays(endpoint: WebhookEndpointRecord): Promise<void> {
    if (this.disabling.has(endpoint.id) || this.deps.endpoints.latest(endpoint.id)?.disabled_at !== null) return;
    this.disabling.add(endpoint.id);
    try {
      const run = await failingSince(this.deps.ch, endpoint.id);
      if (run === null || run.lastMs - run.firstMs < DISABLE_AFTER_MS) return;
      const days = Math.floor((run.lastMs - run.firstMs) / 86_400_000);
      const reason = `every attempt failed for ${days} days (since ${new Date(run.firstMs).toISOString()})`;
      // Another process disabling it at the same time writes the same version: its insert token makes it one.
      await this.deps.disable(endpoint, reason);
      this.deps.metrics.disabled.inc();
      this.deps.log.warn({ endpoint_id: endpoint.id, reason }, 'webhook_endpoint_disabled');
    } finally {
      this.disabling.delete(endpoint.id);
    }
  }
}
