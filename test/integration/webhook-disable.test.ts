import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookEndpointRecord } from '../../schemas/records/webhook-endpoint.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { insertRows } from '../../services/shared/clickhouse/insert-rows.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { readAudit } from '../../services/shared/clickhouse/tables/audit-log.ts';
import { readDeliveryLog } from '../../services/shared/clickhouse/tables/webhook-deliveries.ts';
import { readWebhookEndpoints, webhookEndpointRow } from '../../services/shared/clickhouse/tables/webhook-endpoints.ts';
import { createLogger } from '../../services/shared/logger.ts';
import {
  createWebhookEmitter,
  createWebhookMetrics,
  DeliveryWorker,
  MemoryDeliveryClaims,
  newWebhookSecret,
  WebhookEndpoints,
} from '../../services/domain/webhooks/index.ts';
import { disableEndpoint } from '../../services/consumer/webhook-disable.ts';
import { freePort } from '../../infra/local/free-port.ts';
import { eventually, isolate, testConfig } from '../support/harness.ts';

const DAY_MS = 86_400_000;

/**
 * The outbox and the delivery worker on the real embedded ClickHouse, with the clock in the test's hands:
 * an endpoint whose every attempt failed for 5 days is disabled, with its audit entry, and gets nothing after.
 */
describe('an endpoint failing for days', () => {
  let ch: ClickHouse;
  const log = createLogger('silent');
  let clock = Date.parse('2026-11-01T00:00:00Z');
  const now = () => clock;

  beforeAll(async () => {
    ch = await createClickHouse(testConfig(isolate('webhook-disable')));
    await migrate(ch, log);
  });

  afterAll(async () => {
    await ch?.client.close();
  });

  it('is disabled once every attempt failed for 5 days, with an audit entry, and is sent nothing after', async () => {
    // Nothing listens on the port: every attempt is refused.
    const endpoint: WebhookEndpointRecord = {
      id: randomUUID(),
      user_id: 'tenant-failing',
      url: `http://127.0.0.1:${await freePort()}/hook`,
      events: ['budget.exhausted'],
      description: null,
      secrets: [{ secret: newWebhookSecret(), expires_at: null }],
      created_at: new Date(clock).toISOString(),
      disabled_at: null,
      disabled_reason: null,
      deleted_at: null,
      version: 1,
    };
    await insertRows(ch, 'webhookEndpoints', [webhookEndpointRow(endpoint, randomUUID())], randomUUID());
    const endpoints = new WebhookEndpoints(ch, log);
    await endpoints.refresh();
    const emit = createWebhookEmitter({ ch, endpoints, now });
    const metrics = createWebhookMetrics();
    const workerOf = () =>
      new DeliveryWorker({
        ch,
        endpoints,
        claims: new MemoryDeliveryClaims(),
        metrics,
        log,
        settings: { allowPrivate: true, timeoutMs: 1_000, pollMs: 60_000, retryBaseMs: 1_000 },
        disable: (found, reason) => disableEndpoint(ch, endpoints, found, reason, clock),
        now,
      });
    const worker = workerOf();
    const attemptsOf = async () =>
      (await readDeliveryLog(ch, endpoint.id, 50)).flatMap((delivery) => delivery.attempts);
    /** Waits until the message of `key`'s day was attempted (the day-0 one is retried, then given up, beside it). */
    const attempted = (count: number) =>
      eventually(async () =>
        expect((await attemptsOf()).filter((a) => a.at_ms === clock).length).toBeGreaterThanOrEqual(count),
      );

    expect(
      (await emit({ type: 'budget.exhausted', user_id: 'tenant-failing', data: {}, idempotency_key: 'day-0' }))
        .endpoints,
    ).toBe(1);
    await worker.pass();
    await attempted(1);
    expect((await attemptsOf())[0]).toMatchObject({ ok: false, status_code: null });

    // Four days on, still failing: not yet disabled.
    clock += 4 * DAY_MS;
    await emit({ type: 'budget.exhausted', user_id: 'tenant-failing', data: {}, idempotency_key: 'day-4' });
    await worker.pass();
    await attempted(2);
    expect(endpoints.latest(endpoint.id)!.disabled_at).toBeNull();

    // Five days after the first failure: disabled.
    clock += DAY_MS;
    await emit({ type: 'budget.exhausted', user_id: 'tenant-failing', data: {}, idempotency_key: 'day-5' });
    await worker.pass();
    await eventually(async () => expect(endpoints.latest(endpoint.id)!.disabled_at).not.toBeNull());
    const [stored] = (await readWebhookEndpoints(ch)).filter((found) => found.id === endpoint.id);
    expect(stored).toMatchObject({ version: 2, disabled_at: new Date(clock).toISOString() });
    expect(stored!.disabled_reason).toContain('every attempt failed for 5 days');
    const audit = await readAudit(ch, 10, 'tenant-failing');
    expect(audit).toMatchObject([
      { action: 'webhook_disabled', subject_id: endpoint.id, actor_key_id: 'webhook-delivery' },
    ]);
    expect(JSON.stringify(audit)).not.toContain('whsec_');
    expect(endpoints.active().map((found) => found.id)).not.toContain(endpoint.id);

    // Disabled: a new event is not queued for it, and nothing more is attempted.
    const later = await emit({
      type: 'budget.exhausted',
      user_id: 'tenant-failing',
      data: {},
      idempotency_key: 'day-6',
    });
    expect(later.endpoints).toBe(0);
    await worker.stop();
    const before = (await attemptsOf()).length;
    clock += DAY_MS;
    const next = workerOf();
    await next.pass();
    await next.stop();
    expect(await attemptsOf()).toHaveLength(before);
    expect(await metrics.registry.getSingleMetricAsString('webhook_endpoints_disabled_total')).toMatch(/ 1$/m);
  });
});
