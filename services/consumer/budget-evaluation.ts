import type { BudgetRecord } from '../../schemas/records/budget.ts';
import type { WebhookEventType } from '../../schemas/records/webhook-endpoint.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { Exact } from '../shared/exact-decimal.ts';
import type { Logger } from '../shared/logger.ts';
import type { StoredAnnouncement } from '../shared/redis/stored-announcements.ts';
import { callSpends, periodSpends, thresholdsOf, type Budgets } from '../domain/budgets/index.ts';
import type { EmitWebhookEvent } from '../domain/webhooks/index.ts';

/** How often the tenants whose usage was stored are evaluated: a crossing is sent this soon after it is stored. */
export const EVALUATION_INTERVAL_MS = 250;
/** Keys fired that this process remembers, so that it does not ask the outbox about them again. */
const FIRED_KEPT = 100_000;

export interface BudgetEvaluationDeps {
  readonly budgets: Budgets;
  /** Where the spend is summed from: the store the consumer writes (never behind the journal's fence). */
  readonly reads: ClickHouse;
  readonly emit: EmitWebhookEvent;
  readonly log: Logger;
  readonly now?: () => number;
}

/**
 * Budget evaluation (docs/budgets.md#alerts), in each consumer process: the tenants and calls whose
 * usage it stored are evaluated within EVALUATION_INTERVAL_MS, each budget's spend summed from the
 * stored usage, and every threshold at or below it emitted as a webhook whose idempotency key names the
 * budget, the period (or the call) and the threshold. The outbox sends a key once (its webhook-id is
 * derived from it): a restart, a replay or another consumer process evaluating the same tenant emits
 * it again and nothing more is sent. Crossings are read from the stored spend, so a correction or a
 * repricing that lowers it never un-fires a threshold, and one that raises it fires the next.
 */
export class BudgetEvaluation {
  private tenants = new Set<string>();
  private sessions = new Set<string>();
  private readonly fired = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private readonly now: () => number;

  constructor(private readonly deps: BudgetEvaluationDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** What a stored batch announced: its tenants (and calls) are evaluated on the next turn if they have budgets. */
  touched(announcement: StoredAnnouncement): void {
    for (const tenant of announcement.tenants) this.tenants.add(tenant);
    for (const session of announcement.sessions) this.sessions.add(session);
  }

  start(): () => Promise<void> {
    this.timer = setInterval(() => {
      this.running = this.running.then(() =>
        this.evaluate().catch((error: unknown) => this.deps.log.warn({ err: error }, 'budget_evaluation_failed')),
      );
    }, EVALUATION_INTERVAL_MS);
    this.timer.unref();
    return async () => {
      if (this.timer !== null) clearInterval(this.timer);
      await this.running;
    };
  }

  /** Evaluates the tenants touched since the last turn (again on the next, if this one fails). */
  async evaluate(): Promise<void> {
    const tenants = [...this.tenants].filter((tenant) => this.deps.budgets.all(tenant).length > 0);
    const sessions = [...this.sessions];
    this.tenants = new Set();
    this.sessions = new Set();
    try {
      for (const tenant of tenants) await this.evaluateTenant(tenant, sessions);
    } catch (error) {
      for (const tenant of tenants) this.tenants.add(tenant);
      for (const session of sessions) this.sessions.add(session);
      throw error;
    }
  }

  private async evaluateTenant(tenant: string, sessions: readonly string[]): Promise<void> {
    const budgets = this.deps.budgets.all(tenant);
    const nowMs = this.now();
    const spends = await periodSpends(this.deps.reads, budgets, nowMs);
    for (const budget of budgets) {
      const spend = spends.get(budget.id);
      if (spend === undefined) continue;
      const period = {
        period_start: new Date(spend.start).toISOString(),
        period_end: new Date(spend.end).toISOString(),
      };
      await this.fire(
        budget,
        spend.spent,
        `${budget.id}:${spend.start}`,
        { ...period, session_id: null },
        'budget.exhausted',
      );
    }
    for (const cap of budgets.filter((budget) => budget.per_call)) {
      for (const call of await callSpends(this.deps.reads, cap, sessions)) {
        await this.fire(
          cap,
          call.spent,
          `${cap.id}:${call.session_id}`,
          { period_start: null, period_end: null, session_id: call.session_id, agent_id: call.agent_id || null },
          'call.cap_reached',
        );
      }
    }
  }

  /** Emits each threshold the spend has reached, and the amount's own event once the amount is reached. */
  private async fire(
    budget: BudgetRecord,
    spent: Exact,
    scope: string,
    context: Record<string, string | null>,
    reached: WebhookEventType,
  ): Promise<void> {
    const amount = new Exact(budget.amount);
    const crossings: { type: WebhookEventType; threshold: string; key: string }[] = thresholdsOf(budget)
      .filter((threshold) => spent.gte(threshold.amount))
      .map((threshold) => ({
        type: 'budget.threshold_crossed',
        threshold: threshold.label,
        key: `budget:${scope}:${threshold.label}`,
      }));
    if (spent.gte(amount)) crossings.push({ type: reached, threshold: '100%', key: `budget:${scope}:${reached}` });
    for (const crossing of crossings) {
      if (this.fired.has(crossing.key)) continue;
      await this.deps.emit({
        type: crossing.type,
        user_id: budget.user_id,
        idempotency_key: crossing.key,
        data: {
          budget_id: budget.id,
          name: budget.name,
          user_id: budget.user_id,
          agent_id: budget.agent_id,
          threshold: crossing.threshold,
          amount: amount.toFixed(),
          spent: spent.toFixed(),
          action: budget.action,
          ...context,
        },
      });
      if (this.fired.size >= FIRED_KEPT) this.fired.clear();
      this.fired.add(crossing.key);
    }
  }
}
