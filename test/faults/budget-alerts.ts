import { expect } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { eventually } from '../support/harness.ts';
import { expectedTotals } from '../support/rollups.ts';
import type { Received, WebhookReceiver } from '../support/webhook-receiver.ts';
import type { AlertDriver, AlertTarget } from './alert-driver.ts';
import { alertReport, keyOf, type Budget, type Crossing, type Delivery, type Payload } from './alert-report.ts';

export const ALERT_USER = 'fault-alerts';
const AGENT = 'alert-agent';
const PATH = '/budget-alerts';
const EVENTS = ['budget.threshold_crossed', 'budget.exhausted', 'budget.resolved', 'call.cap_reached'];
/** After the drain: how long the outbox may take to deliver what it still retries (its pauses grow with the outage). */
const SETTLE_MS = 240_000;

export interface AlertSetup {
  readonly target: AlertTarget;
  readonly endpointId: string;
  /** The tenant's month budget and the per-call cap of the driver's call: what they cross is expected. */
  readonly tenant: Budget;
  readonly cap: Budget;
  /** A budget of an agent that spends nothing: it must never fire. */
  readonly idle: Budget;
  /** The message sent before the load to learn that the consumer knows the endpoint. */
  readonly probeId: string;
}

/**
 * Before the load: an endpoint of the alert tenant for the budget events at `receiver`, a month budget of
 * the tenant (its thresholds at 10 %, 25 %, 50 % and 100 % of `amount`, and 900 % that nothing reaches), a
 * per-call cap (`cap`, a threshold at half of it) of the agent whose call the alert driver sends, and a
 * budget of an agent that spends nothing. Returns once the consumer knows the endpoint: a message the
 * consumer emitted before would go to no endpoint, and be fired for none.
 */
export async function arrangeBudgetAlerts(
  ingestUrl: string,
  consumerUrl: string,
  receiver: WebhookReceiver,
  { amount, cap }: { amount: Exact; cap: Exact },
): Promise<AlertSetup> {
  const endpoint = await call<{ id: string; secret: string }>(ingestUrl, 'POST', '/api/webhooks', {
    url: receiver.url(PATH),
    user_id: ALERT_USER,
    events: EVENTS,
  });
  expect(endpoint.status).toBe(201);
  receiver.expectSecrets(PATH, [endpoint.body.secret]);
  const budget = async (body: Record<string, unknown>) => {
    const created = await call<Budget>(ingestUrl, 'POST', '/api/budgets', { user_id: ALERT_USER, ...body });
    expect(created.status).toBe(201);
    return created.body;
  };
  const tenant = await budget({
    name: 'tenant month',
    amount: amount.toFixed(),
    period: 'month',
    time_zone: monthZone(Date.now()),
    thresholds: ['10%', '25%', '50%', '100%', '900%'],
  });
  const capBudget = await budget({
    name: 'per call',
    agent_id: AGENT,
    per_call: true,
    amount: cap.toFixed(),
    thresholds: ['50%'],
  });
  const idle = await budget({ name: 'idle agent', agent_id: 'idle-agent', amount: '0.01', period: 'day' });
  const session = await call<{ id: string }>(ingestUrl, 'POST', '/api/sessions/', {
    room_name: 'fault-alerts-room',
    user_id: ALERT_USER,
    agent_id: AGENT,
  });
  expect(session.status).toBe(201);
  const probe = await eventually(
    async () => {
      const emitted = await call<{ message_id: string; endpoints: number }>(
        consumerUrl,
        'POST',
        '/_faults/webhook-events',
        {
          type: 'budget.resolved',
          user_id: ALERT_USER,
          data: { probe: 'the consumer knows the endpoint' },
          idempotency_key: `probe-${Date.now()}`,
        },
      );
      expect(emitted.body.endpoints).toBe(1);
      return emitted.body.message_id;
    },
    60_000,
    500,
  );
  await eventually(async () => expect(receiver.accepted(PATH).map((request) => request.id)).toContain(probe));
  return {
    target: { user_id: ALERT_USER, session_id: session.body.id },
    endpointId: endpoint.body.id,
    tenant,
    cap: capBudget,
    idle,
    probeId: probe,
  };
}

/**
 * UTC, unless its month ends within the hour (the suite would straddle two periods): then UTC+14, a
 * zone already 14 hours into the next month.
 */
function monthZone(nowMs: number): string {
  const now = new Date(nowMs);
  const end = Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return end - nowMs < 3_600_000 ? 'Pacific/Kiritimati' : 'UTC';
}

function crossingsOf(budget: Budget, reached: string): Crossing[] {
  const amount = new Exact(budget.amount);
  const key = (type: string, threshold: string) => `${type} ${budget.id} ${threshold}`;
  return [
    ...budget.thresholds.map((threshold) => ({
      key: key('budget.threshold_crossed', threshold),
      budget,
      type: 'budget.threshold_crossed',
      threshold,
      at: threshold.endsWith('%') ? amount.times(threshold.slice(0, -1)).div(100) : new Exact(threshold),
    })),
    { key: key(reached, '100%'), budget, type: reached, threshold: '100%', at: amount },
  ];
}

/** The endpoint's messages in the consumer's outbox, but the probe. */
async function outboxOf(consumerUrl: string, setup: AlertSetup): Promise<Delivery[]> {
  const log = await call<Delivery[]>(
    consumerUrl,
    'GET',
    `/_faults/webhook-deliveries?endpoint_id=${setup.endpointId}&limit=500`,
  );
  expect(log.status).toBe(200);
  return log.body.filter((delivery) => delivery.message_id !== setup.probeId);
}

/** Resolves as soon as the consumer has emitted its first alert: its evaluation is running. */
export async function firstAlertEmitted(consumerUrl: string, setup: AlertSetup): Promise<void> {
  await eventually(async () => expect(await outboxOf(consumerUrl, setup)).not.toEqual([]), 60_000, 100);
}

export interface AlertCheck {
  readonly consumerUrl: string;
  readonly receiver: WebhookReceiver;
  readonly setup: AlertSetup;
  /** Stopped: every event it sent is acknowledged. */
  readonly driver: AlertDriver;
  /** When the load started, and when the receiver was down (epoch ms). */
  readonly startedAt: number;
  readonly down: { readonly from: number; readonly to: number };
}

/**
 * After the drain: waits until every crossing the driver's spend reached was received and the outbox
 * holds nothing pending, prints the deliveries, then checks that each crossing was fired once (one
 * webhook-id, however many times it arrived), nothing else was sent, every signature verified with the
 * `standardwebhooks` package, each `spent` is a prefix sum of the driver's exact costs at or above the
 * threshold, and that the outbox retried messages the receiver refused while it was down.
 */
export async function expectBudgetAlerts(check: AlertCheck): Promise<void> {
  const { consumerUrl, receiver, setup, driver } = check;
  const sums = driver.prefixSums();
  const total = sums.at(-1) ?? new Exact(0);
  const expected = [
    ...crossingsOf(setup.tenant, 'budget.exhausted'),
    ...crossingsOf(setup.cap, 'call.cap_reached'),
  ].filter((crossing) => crossing.at.lte(total));
  const received = () => receiver.received.filter((request) => request.id !== setup.probeId);
  const outbox = () => outboxOf(consumerUrl, setup);
  const checkedAt = Date.now();
  await eventually(
    async () => {
      const got = new Set(received().map((request) => keyOf(JSON.parse(request.body) as Payload)));
      expect(expected.filter((crossing) => !got.has(crossing.key)).map((crossing) => crossing.key)).toEqual([]);
      expect((await outbox()).filter((delivery) => delivery.status !== 'delivered')).toEqual([]);
    },
    SETTLE_MS,
    1_000,
  ).catch((error: unknown) =>
    process.stdout.write(`the alerts did not settle within ${SETTLE_MS / 1000} s: ${String(error)}\n`),
  );
  const settledAt = Date.now();
  const log = await outbox();
  const requests = received();
  process.stdout.write(`\n${alertReport(check.driver, check, expected, requests, log)}\n`);
  process.stdout.write(
    `alerts settled ${((settledAt - checkedAt) / 1000).toFixed(1)} s after the stored check ended (+${((settledAt - check.startedAt) / 1000).toFixed(1)} s)\n`,
  );

  // Each of the driver's events stored once, in every table: what makes every spend a prefix sum.
  const stored = await call(consumerUrl, 'GET', `/_faults/stored-totals?user_id=${ALERT_USER}`);
  expect(stored.body).toEqual(expectedTotals(driver.events.length, total.toFixed()));

  expect(requests.filter((request) => !request.verified).map((request) => request.id)).toEqual([]);
  expect(requests.filter((request) => request.path !== PATH).map((request) => request.path)).toEqual([]);
  const byKey = new Map<string, Set<string>>();
  for (const request of requests) {
    const key = keyOf(JSON.parse(request.body) as Payload);
    byKey.set(key, (byKey.get(key) ?? new Set()).add(request.id));
  }
  const keys = new Set(expected.map((crossing) => crossing.key));
  expect(
    [...byKey.keys()].filter((key) => !keys.has(key)),
    'crossings no spend reached',
  ).toEqual([]);
  expect(
    expected.map((crossing) => [crossing.key, byKey.get(crossing.key)?.size ?? 0]),
    'webhook-ids per crossing',
  ).toEqual(expected.map((crossing) => [crossing.key, 1]));
  for (const [id, bodies] of groupBy(requests, (request) => request.id))
    expect(new Set(bodies.map((request) => request.body)).size, `bodies of ${id}`).toBe(1);
  expect(payloadProblems(setup, expected, requests, sums)).toEqual([]);
  // The outbox sent each crossing as one message, and retried those the receiver refused while it was down.
  expect(log.map((delivery) => delivery.message_id).sort()).toEqual([...groupBy(requests, (r) => r.id).keys()].sort());
  expect(log.filter((delivery) => delivery.status !== 'delivered')).toEqual([]);
  expect(log.filter((delivery) => delivery.attempts.some((attempt) => attempt.status_code === null))).not.toEqual([]);
}

/** What is wrong in each payload: a `spent` that is no prefix sum or below its threshold, a wrong budget or call. */
function payloadProblems(
  setup: AlertSetup,
  expected: readonly Crossing[],
  requests: readonly Received[],
  sums: readonly Exact[],
): string[] {
  const possible = new Set(sums.map((sum) => sum.toFixed()));
  const problems: string[] = [];
  for (const request of requests) {
    const payload = JSON.parse(request.body) as Payload;
    const crossing = expected.find((candidate) => candidate.key === keyOf(payload));
    if (crossing === undefined) continue;
    const { data } = payload;
    const spent = new Exact(data.spent ?? 'NaN');
    const capped = crossing.budget === setup.cap;
    const wrong = [
      !possible.has(spent.toFixed()) && `spent ${data.spent} is no prefix sum of the driver's costs`,
      spent.lt(crossing.at) && `spent ${data.spent} below ${crossing.at.toFixed()}`,
      data.amount !== new Exact(crossing.budget.amount).toFixed() && `amount ${data.amount}`,
      data.user_id !== ALERT_USER && `user ${data.user_id}`,
      data.session_id !== (capped ? setup.target.session_id : null) && `session ${data.session_id}`,
      !capped && data.period_start !== crossing.budget.period_start && `period_start ${data.period_start}`,
    ].filter((problem): problem is string => problem !== false);
    if (wrong.length > 0) problems.push(`${crossing.key} (${request.id}): ${wrong.join('; ')}`);
  }
  return problems;
}

function groupBy<T>(items: readonly T[], key: (item: T) => string): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) groups.set(key(item), [...(groups.get(key(item)) ?? []), item]);
  return groups;
}
