import type { Exact } from '../../services/shared/exact-decimal.ts';
import type { Received } from '../support/webhook-receiver.ts';
import type { AlertDriver } from './alert-driver.ts';

/** A budget as POST /api/budgets answered it (the fields the checks read). */
export interface Budget {
  readonly id: string;
  readonly name: string;
  readonly amount: string;
  readonly thresholds: readonly string[];
  readonly period_start: string | null;
}

/** One crossing a budget can fire: the threshold as written, the event type, and the spend that reaches it. */
export interface Crossing {
  readonly key: string;
  readonly budget: Budget;
  readonly type: string;
  readonly threshold: string;
  readonly at: Exact;
}

/** One message of the delivery log (`GET /_faults/webhook-deliveries`). */
export interface Delivery {
  readonly message_id: string;
  readonly type: string;
  readonly status: string;
  /** When it was emitted: when the consumer's evaluation saw the crossing. */
  readonly created_at: string;
  readonly attempts: readonly { status_code: number | null; ok: boolean; error: string | null }[];
}

/** A webhook's body. */
export interface Payload {
  readonly type: string;
  readonly data: Record<string, string | null>;
}

/** Which crossing a payload announces: its type, budget and threshold. */
export const keyOf = (payload: Payload) => `${payload.type} ${payload.data.budget_id} ${payload.data.threshold}`;

/**
 * The deliveries table: per crossing, the event whose spend crossed it (its phase and when it was
 * acknowledged), when the consumer emitted it, the `spent` sent, the webhook-id, the outbox's attempts
 * (refused before the one that succeeded) and how often the receiver got it, when first. Times are
 * seconds since the load started; the line above it says when each phase began and the receiver's outage.
 */
export function alertReport(
  driver: AlertDriver,
  { startedAt, down }: { readonly startedAt: number; readonly down: { readonly from: number; readonly to: number } },
  expected: readonly Crossing[],
  requests: readonly Received[],
  log: readonly Delivery[],
): string {
  const sums = driver.prefixSums();
  const since = (ms: number | null) => (ms === null ? '-' : `+${((ms - startedAt) / 1000).toFixed(1)} s`);
  const began = new Map<string, number>();
  for (const event of driver.events) if (!began.has(event.phase)) began.set(event.phase, event.sentAt);
  const phases = [...began].map(([phase, at]) => `${phase} ${since(at)}`);
  const lines = [
    `alerts: the alert driver's ${driver.events.length} events, ${sums.at(-1)?.toFixed() ?? '0'} in all; receiver down ${since(down.from)} to ${since(down.to)} (${((down.to - down.from) / 1000).toFixed(0)} s); phases began: ${phases.join(', ')}; driver retries ${JSON.stringify(Object.fromEntries(driver.retries))}`,
    '| crossing | crossed by event | emitted | spent | webhook-id | outbox attempts (refused, ok) | received | first received |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const crossing of expected) {
    const own = requests.filter((request) => keyOf(JSON.parse(request.body) as Payload) === crossing.key);
    const index = sums.findIndex((sum) => sum.gte(crossing.at));
    const event = driver.events[index];
    const spent = own.length === 0 ? '-' : (JSON.parse(own[0]!.body) as Payload).data.spent;
    const ids = [...new Set(own.map((request) => request.id))];
    const messages = log.filter((delivery) => ids.includes(delivery.message_id));
    const attempts = messages.flatMap((delivery) => delivery.attempts);
    const refused = attempts.filter((attempt) => !attempt.ok).length;
    const emitted = messages.length === 0 ? null : Math.min(...messages.map((m) => Date.parse(m.created_at)));
    lines.push(
      `| ${crossing.budget.name}: ${crossing.type} ${crossing.threshold} | #${index} (${event?.phase ?? '?'}, ${since(event?.acknowledgedAt ?? null)}) | ${since(emitted)} | ${spent} | ${ids.join(' ') || 'none'} | ${refused}, ${attempts.length - refused} | ${own.length} | ${since(own[0]?.at ?? null)} |`,
    );
  }
  const unexpected = requests.filter((request) => !expected.some((c) => c.key === keyOf(JSON.parse(request.body))));
  if (unexpected.length > 0) lines.push(`unexpected: ${JSON.stringify(unexpected.map((r) => r.body))}`);
  return lines.join('\n');
}
