import { randomUUID } from 'node:crypto';
import type { BudgetCreateBody, BudgetPatchBody, budgetSchema } from '../../../schemas/http/budgets.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import type { AuditRecord } from '../../../schemas/records/api-key.ts';
import type { BudgetRecord } from '../../../schemas/records/budget.ts';
import type { Caller } from '../../shared/auth/access.ts';
import { auditEnvelope } from '../../shared/auth/audit.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { Exact } from '../../shared/exact-decimal.ts';
import type { ValidationItem } from '../../shared/errors.ts';
import { makeEnvelope, type RecordSink } from '../../domain/records/index.ts';
import { periodSpends, projectedExhaustion, type Budgets } from '../../domain/budgets/index.ts';

export type BudgetView = WireOf<typeof budgetSchema>;

/** Budgets one tenant may hold: enough for a budget per agent of a large fleet. */
export const MAX_BUDGETS_PER_TENANT = 10_000;
const NOT_FOUND = 'Budget not found';
const FILTER_KEYS = ['service', 'provider', 'model'] as const;

export interface BudgetServiceDeps {
  readonly budgets: Budgets;
  readonly sink: RecordSink;
  /** Where the spend is summed from (the usage rollups). */
  readonly reads: ClickHouse;
  readonly now?: () => number;
}

/**
 * Budgets (docs/budgets.md): each change is a version of the budget on the record path (budgets table)
 * with its audit record, known to this process at once and to every other within 2 s. Every read adds
 * the spend of the current period, summed from the stored usage.
 */
export function createBudgetService({ budgets, sink, reads, now = Date.now }: BudgetServiceDeps) {
  async function publish(budget: BudgetRecord, action: AuditRecord['action'], actor: Caller) {
    const at = new Date(now());
    const key = `budget:${budget.id}`;
    await sink.publish([
      makeEnvelope('budget', key, budget, at, at),
      auditEnvelope({ action, subject_id: budget.id, actor, user_id: budget.user_id, at, detail: budget }, key),
    ]);
    budgets.note(budget);
  }

  function find(id: string, caller: Caller): BudgetRecord {
    const budget = budgets.latest(id);
    if (budget === null || budget.deleted_at !== null) throw AppError.of('NOT_FOUND', NOT_FOUND);
    if (caller.tenant !== null && budget.user_id !== caller.tenant) throw AppError.of('NOT_FOUND', NOT_FOUND);
    return budget;
  }

  async function views(list: readonly BudgetRecord[]): Promise<BudgetView[]> {
    const nowMs = now();
    const spends = await periodSpends(reads, list, nowMs);
    return list.map((budget) => viewOf(budget, spends.get(budget.id) ?? null, nowMs));
  }

  return {
    async create(body: BudgetCreateBody, caller: Caller): Promise<BudgetView> {
      assertActsFor(caller.tenant, body.user_id, 'set budgets');
      const perCall = body.per_call ?? false;
      const period = body.period ?? (perCall ? 'none' : 'month');
      const problems = [
        ...(perCall && period !== 'none'
          ? [valueError(['period'], 'a per-call cap has no calendar period: leave it out or send "none"', period)]
          : []),
        ...(!perCall && period === 'none'
          ? [valueError(['period'], 'period "none" is for a per-call cap (per_call: true)', period)]
          : []),
        ...thresholdProblems(body.thresholds ?? ['100%']),
        ...amountProblems(body.amount),
      ];
      const filter = filterOf(body.filter, problems);
      if (problems.length > 0) throw AppError.validation(problems);
      if (budgets.count(body.user_id) >= MAX_BUDGETS_PER_TENANT)
        throw AppError.of(
          'CONFLICT',
          `User ${body.user_id} has ${MAX_BUDGETS_PER_TENANT} budgets, the most one user may hold: delete one first`,
        );
      const at = new Date(now()).toISOString();
      const budget: BudgetRecord = {
        id: randomUUID(),
        name: body.name,
        user_id: body.user_id,
        agent_id: body.agent_id ?? null,
        per_call: perCall,
        amount: new Exact(body.amount).toFixed(),
        period,
        time_zone: body.time_zone ?? 'UTC',
        thresholds: [...new Set(body.thresholds ?? ['100%'])],
        action: body.action ?? 'notify',
        filter,
        created_at: at,
        updated_at: at,
        deleted_at: null,
        version: 1,
      };
      await publish(budget, 'budget_created', caller);
      return (await views([budget]))[0]!;
    },

    list: (caller: Caller, userId: string | undefined) => {
      if (userId !== undefined) assertActsFor(caller.tenant, userId, 'read budgets');
      const oldestFirst = (a: BudgetRecord, b: BudgetRecord) =>
        a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : a.id < b.id ? -1 : 1;
      return views(budgets.all(userId ?? caller.tenant).sort(oldestFirst));
    },

    get: async (id: string, caller: Caller) => (await views([find(id, caller)]))[0]!,

    async update(id: string, body: BudgetPatchBody, caller: Caller): Promise<BudgetView> {
      const budget = find(id, caller);
      const problems = [
        ...(body.thresholds === undefined ? [] : thresholdProblems(body.thresholds)),
        ...(body.amount === undefined ? [] : amountProblems(body.amount)),
      ];
      const filter = body.filter === undefined ? budget.filter : filterOf(body.filter, problems);
      if (problems.length > 0) throw AppError.validation(problems);
      const changed: BudgetRecord = {
        ...budget,
        name: body.name ?? budget.name,
        amount: body.amount === undefined ? budget.amount : new Exact(body.amount).toFixed(),
        thresholds: body.thresholds === undefined ? budget.thresholds : [...new Set(body.thresholds)],
        action: body.action ?? budget.action,
        filter,
        updated_at: new Date(now()).toISOString(),
        version: budget.version + 1,
      };
      await publish(changed, 'budget_updated', caller);
      return (await views([changed]))[0]!;
    },

    async remove(id: string, caller: Caller): Promise<void> {
      const budget = find(id, caller);
      const at = new Date(now()).toISOString();
      await publish(
        { ...budget, deleted_at: at, updated_at: at, version: budget.version + 1 },
        'budget_deleted',
        caller,
      );
    },
  };
}

export type BudgetService = ReturnType<typeof createBudgetService>;

function viewOf(
  budget: BudgetRecord,
  spend: { spent: Exact; start: number; end: number } | null,
  nowMs: number,
): BudgetView {
  const amount = new Exact(budget.amount);
  return {
    id: budget.id,
    name: budget.name,
    user_id: budget.user_id,
    agent_id: budget.agent_id,
    per_call: budget.per_call,
    amount: amount.toFixed(),
    period: budget.period,
    time_zone: budget.time_zone,
    thresholds: budget.thresholds,
    action: budget.action,
    filter: budget.filter,
    created_at: budget.created_at,
    updated_at: budget.updated_at,
    spent: spend === null ? null : spend.spent.toFixed(),
    remaining: spend === null ? null : Exact.max(0, amount.minus(spend.spent)).toFixed(),
    period_start: spend === null ? null : new Date(spend.start).toISOString(),
    period_end: spend === null ? null : new Date(spend.end).toISOString(),
    projected_exhaustion_at:
      spend === null ? null : projectedExhaustion(spend.spent, amount, spend.start, spend.end, nowMs),
  };
}

function valueError(loc: (string | number)[], message: string, input: unknown): ValidationItem {
  return { type: 'value_error', loc: ['body', ...loc], msg: `Value error, ${message}`, input, ctx: { error: {} } };
}

/** Money is kept to 18 decimals (Decimal(38, 18)): an amount finer than that is refused, never rounded. */
function amountProblems(amount: string): ValidationItem[] {
  return new Exact(amount).decimalPlaces() > 18
    ? [valueError(['amount'], 'an amount has at most 18 decimals', amount)]
    : [];
}

/** A threshold of 0, or a percentage above 1000 %, says nothing a budget can act on. */
function thresholdProblems(thresholds: readonly string[]): ValidationItem[] {
  return thresholds.flatMap((threshold, index) => {
    const value = new Exact(threshold.replace(/%$/, ''));
    if (value.isZero()) return [valueError(['thresholds', index], 'a threshold is above 0', threshold)];
    if (threshold.endsWith('%') && value.gt(1000))
      return [valueError(['thresholds', index], 'a percentage threshold is at most 1000%', threshold)];
    return [];
  });
}

/** The filter's keys as stored (a provider in lower case, as usage stores it); a problem per unknown key or value. */
function filterOf(filter: Record<string, unknown> | undefined, problems: ValidationItem[]): BudgetRecord['filter'] {
  const out: { service?: string; provider?: string; model?: string } = {};
  for (const [key, value] of Object.entries(filter ?? {})) {
    if (!(FILTER_KEYS as readonly string[]).includes(key)) {
      problems.push(valueError(['filter', key], 'a filter names service, provider or model', value));
      continue;
    }
    if (typeof value !== 'string' || value.length === 0 || value.length > 256) {
      problems.push(valueError(['filter', key], 'a filter value is a text of 1 to 256 characters', value));
      continue;
    }
    out[key as (typeof FILTER_KEYS)[number]] = key === 'provider' ? value.toLowerCase() : value;
  }
  return out;
}
