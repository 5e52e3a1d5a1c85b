import { Counter, Registry } from 'prom-client';
import type { BudgetRecord } from '../../schemas/records/budget.ts';
import type { WebhookEventType } from '../../schemas/records/webhook-endpoint.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { existingMessages } from '../shared/clickhouse/tables/webhook-deliveries.ts';
import { Exact } from '../shared/exact-decimal.ts';
import type { Logger } from '../shared/logger.ts';
import type { StoredAnnouncement } from '../shared/redis/stored-announcements.ts';
import {
  callSpends,
  periodBoundsAt,
  periodSpends,
  recentCalls,
  thresholdsOf,
  type Budgets,
  type Threshold,
} from '../domain/budgets/index.ts';
import { messageIdOf, type EmitWebhookEvent } from '../domain/webhooks/index.ts';

/** How often the tenants whose usage was stored are evaluated: a crossing is sent this soon after it is stored. */
export const EVALUATION_INTERVAL_MS = 250;
/** Keys fired that this process remembers, so that it does not ask the outbox about them again. */
const FIRED_KEPT = 100_000;
/**
 * How far back a per-call cap this process has just learned of looks for calls: those with usage stored
 * in this window are checked against it at once, not only when their next usage is stored.
 */
export const RECENT_CALLS_MS = 10 * 60_000;

export interface BudgetEvaluationDeps {
  readonly budgets: Budgets;
  /** Where the spend is summed from and the outbox read: the store the consumer writes (never behind the journal's fence). */
  readonly reads: ClickHouse;
  readonly emit: EmitWebhookEvent;
  readonly log: Logger;
  readonly now?: () => number;
}

/**
 * The idempotency key of a crossing: the budget, its period (or call), what was reached, and the amount
 * the budget was set to when what was reached depends on it (a percentage, the amount itself): raised,
 * it may be reached again; an amount of money as a threshold is reached once per period whatever the budget's amount.
 */
const crossingKey = (budget: BudgetRecord, scope: string | number, amount: string, what: string) =>
  `budget:${budget.id}:${scope}:${/^\d+(\.\d+)?$/.test(what) ? '-' : amount}:${what}`;

/** What a budget's last turn saw: a change of period or of amount may resolve an exhausted one. */
interface Seen {
  readonly start: number | null;
  readonly version: number;
  readonly amount: string;
}

/**
 * Budget evaluation (docs/budgets.md#alerts), in each consumer process: the tenants and calls whose
 * usage it stored are evaluated within EVALUATION_INTERVAL_MS, each budget's spend summed from the
 * stored usage, and every threshold at or below it emitted as a webhook whose idempotency key names the
 * budget, the period (or the call), the amount and the threshold. The outbox sends a key once (its
 * webhook-id is derived from it): a restart, a replay or another consumer process evaluating the same
 * tenant emits it again and nothing more is sent. An exhausted budget is resolved once its period
 * resets or it is raised above its spend, again once per key.
 */
export class BudgetEvaluation {
  private tenants = new Set<string>();
  private sessions = new Set<string>();
  private readonly fired = new Set<string>();
  private readonly seen = new Map<string, Seen>();
  /** Each budget version's thresholds as money, lowest first: read once, not on every turn. */
  private readonly thresholds = new Map<string, { version: number; list: Threshold[] }>();
  /** Budgets raised (or changed) since they were last evaluated, with the amount before. */
  private readonly changed = new Map<string, string>();
  /** Per-call caps new to this process or changed: checked against the tenant's recent calls on the next turn. */
  private readonly capsToCheck = new Set<string>();
  /** The registry's change count and the earliest period end when all budgets were last walked. */
  private walked: { changes: number; until: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> = Promise.resolve();
  private readonly now: () => number;
  readonly metrics = new Registry();
  private readonly evaluations = new Counter({
    name: 'budget_evaluations_total',
    help: 'Budget evaluations of a tenant, by result (ok, failed)',
    labelNames: ['result'] as const,
    registers: [this.metrics],
  });
  private readonly alerts = new Counter({
    name: 'budget_alerts_fired_total',
    help: 'Budget alerts emitted for the first time, by event type',
    labelNames: ['type'] as const,
    registers: [this.metrics],
  });

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
    await this.resolveResets();
    const tenants = [...this.tenants].filter((tenant) => this.deps.budgets.all(tenant).length > 0);
    const sessions = [...this.sessions];
    this.tenants = new Set();
    this.sessions = new Set();
    for (const [index, tenant] of tenants.entries()) {
      try {
        await this.evaluateTenant(tenant, sessions);
        this.evaluations.inc({ result: 'ok' });
      } catch (error) {
        this.evaluations.inc({ result: 'failed' });
        for (const left of tenants.slice(index)) this.tenants.add(left);
        for (const session of sessions) this.sessions.add(session);
        throw error;
      }
    }
  }

  /**
   * Notes each budget's period and version. A budget whose period changed since the last turn, or that
   * this process sees for the first time, is resolved if its previous period was exhausted; one whose
   * amount changed is evaluated again, to be resolved if it was exhausted and is now above its spend.
   */
  private async resolveResets(): Promise<void> {
    const nowMs = this.now();
    // Nothing learned and no period ended since the last walk: every budget is as it was (10,000 of a
    // tenant are not walked four times a second for nothing).
    const changes = this.deps.budgets.changes;
    if (this.walked !== null && this.walked.changes === changes && nowMs < this.walked.until) return;
    let until = Number.POSITIVE_INFINITY;
    const resets: { budget: BudgetRecord; start: number; end: number }[] = [];
    const live = new Set<string>();
    const boundsOf = periodBoundsAt(nowMs);
    const before = new Map<number, ReturnType<typeof periodBoundsAt>>();
    for (const budget of this.deps.budgets.all()) {
      live.add(budget.id);
      const bounds = boundsOf(budget);
      if (bounds !== null && bounds.end < until) until = bounds.end;
      const seen = this.seen.get(budget.id);
      if (seen !== undefined && seen.version !== budget.version && seen.amount !== budget.amount)
        this.changed.set(budget.id, seen.amount);
      // A budget learned of (created, changed, or known anew after a restart) is evaluated at once: what
      // was stored before this process knew it, or before a kill -9 cut an evaluation short, is not
      // announced again.
      if (seen?.version !== budget.version) {
        this.tenants.add(budget.user_id);
        if (budget.per_call) this.capsToCheck.add(budget.id);
      }
      if (bounds !== null && seen?.start !== bounds.start) {
        let previousOf = before.get(bounds.start - 1);
        if (previousOf === undefined) before.set(bounds.start - 1, (previousOf = periodBoundsAt(bounds.start - 1)));
        resets.push({ budget, ...previousOf(budget)! });
      }
      this.seen.set(budget.id, { start: bounds?.start ?? null, version: budget.version, amount: budget.amount });
    }
    for (const id of this.seen.keys())
      if (!live.has(id)) {
        this.seen.delete(id);
        this.thresholds.delete(id);
      }
    this.walked = { changes, until };
    if (resets.length === 0) return;
    const exhaustedIds = resets.map(({ budget, start }) =>
      messageIdOf('budget.exhausted', budget.user_id, crossingKey(budget, start, budget.amount, 'budget.exhausted')),
    );
    const exhausted = await existingMessages(this.deps.reads, exhaustedIds);
    for (const [index, { budget, start, end }] of resets.entries()) {
      if (!exhausted.has(exhaustedIds[index]!)) continue;
      await this.send(budget, 'budget.resolved', crossingKey(budget, start, budget.amount, 'resolved'), {
        threshold: null,
        spent: null,
        reason: 'period_reset',
        period_start: new Date(start).toISOString(),
        period_end: new Date(end).toISOString(),
        session_id: null,
      });
    }
  }

  private async evaluateTenant(tenant: string, sessions: readonly string[]): Promise<void> {
    const budgets = this.deps.budgets.all(tenant);
    const nowMs = this.now();
    const spends = await periodSpends(this.deps.reads, budgets, nowMs);
    for (const budget of budgets) {
      const spend = spends.get(budget.id);
      // Nothing spent reaches no threshold (each is above 0), and resolves nothing unless it was raised.
      if (spend === undefined || (spend.spent.isZero() && !this.changed.has(budget.id))) continue;
      const period = {
        period_start: new Date(spend.start).toISOString(),
        period_end: new Date(spend.end).toISOString(),
        session_id: null,
      };
      await this.fire(budget, spend.spent, spend.start, period, 'budget.exhausted');
      const before = this.changed.get(budget.id);
      this.changed.delete(budget.id);
      if (before !== undefined && spend.spent.lt(budget.amount)) {
        const exhaustedId = messageIdOf(
          'budget.exhausted',
          budget.user_id,
          crossingKey(budget, spend.start, before, 'budget.exhausted'),
        );
        if ((await existingMessages(this.deps.reads, [exhaustedId])).has(exhaustedId))
          await this.send(budget, 'budget.resolved', crossingKey(budget, spend.start, before, 'resolved'), {
            threshold: null,
            spent: spend.spent.toFixed(),
            reason: 'raised',
            ...period,
          });
      }
    }
    let recent: string[] | null = null;
    for (const cap of budgets.filter((budget) => budget.per_call)) {
      const fresh = this.capsToCheck.has(cap.id);
      if (fresh) recent ??= await recentCalls(this.deps.reads, tenant, nowMs - RECENT_CALLS_MS);
      const calls = fresh ? [...new Set([...sessions, ...recent!])] : sessions;
      for (const call of await callSpends(this.deps.reads, cap, calls)) {
        await this.fire(
          cap,
          call.spent,
          call.session_id,
          { period_start: null, period_end: null, session_id: call.session_id, agent_id: call.agent_id || null },
          'call.cap_reached',
        );
      }
      this.capsToCheck.delete(cap.id);
    }
  }

  /** Emits each threshold the spend has reached, and the amount's own event once the amount is reached. */
  private async fire(
    budget: BudgetRecord,
    spent: Exact,
    scope: string | number,
    context: Record<string, string | null>,
    reached: WebhookEventType,
  ): Promise<void> {
    let known = this.thresholds.get(budget.id);
    if (known?.version !== budget.version) {
      known = { version: budget.version, list: thresholdsOf(budget) };
      this.thresholds.set(budget.id, known);
    }
    // Below its lowest threshold (and its amount), a budget has nothing to fire: most budgets, most turns.
    const lowest = known.list[0]!.amount;
    if (spent.lt(lowest) && spent.lt(budget.amount)) return;
    const crossings: { type: WebhookEventType; threshold: string; key: string }[] = known.list
      .filter((threshold) => spent.gte(threshold.amount))
      .map((threshold) => ({
        type: 'budget.threshold_crossed',
        threshold: threshold.label,
        key: crossingKey(budget, scope, budget.amount, threshold.label),
      }));
    if (spent.gte(budget.amount))
      crossings.push({ type: reached, threshold: '100%', key: crossingKey(budget, scope, budget.amount, reached) });
    for (const crossing of crossings)
      await this.send(budget, crossing.type, crossing.key, {
        threshold: crossing.threshold,
        spent: spent.toFixed(),
        ...context,
      });
  }

  private async send(
    budget: BudgetRecord,
    type: WebhookEventType,
    key: string,
    data: Record<string, string | null>,
  ): Promise<void> {
    if (this.fired.has(key)) return;
    const result = await this.deps.emit({
      type,
      user_id: budget.user_id,
      idempotency_key: key,
      data: {
        budget_id: budget.id,
        name: budget.name,
        user_id: budget.user_id,
        agent_id: budget.agent_id,
        amount: new Exact(budget.amount).toFixed(),
        action: budget.action,
        ...data,
      },
    });
    // Nobody subscribed (or this process does not know the endpoint yet): emitted again on a later
    // turn, so that an endpoint registered since receives it.
    if (!result.duplicate && result.endpoints === 0) return;
    if (!result.duplicate) this.alerts.inc({ type });
    if (this.fired.size >= FIRED_KEPT) this.fired.clear();
    this.fired.add(key);
  }
}
