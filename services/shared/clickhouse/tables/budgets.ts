import type { BudgetRecord } from '../../../../schemas/records/budget.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** budgets (migration 020): every version of every budget, the highest version wins. */
export interface BudgetRow {
  readonly id: string;
  readonly name: string;
  readonly user_id: string;
  readonly agent_id: string | null;
  readonly per_call: boolean;
  readonly amount: string;
  readonly period: string;
  readonly time_zone: string;
  readonly thresholds: readonly string[];
  readonly action: string;
  readonly filter_service: string | null;
  readonly filter_provider: string | null;
  readonly filter_model: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  readonly deleted_at: string | null;
  readonly version: number;
  readonly record_id: string;
}

export function budgetRow(budget: BudgetRecord, recordId: string): BudgetRow {
  const { filter, ...rest } = budget;
  return {
    ...rest,
    filter_service: filter.service ?? null,
    filter_provider: filter.provider ?? null,
    filter_model: filter.model ?? null,
    record_id: recordId,
  };
}

/**
 * What the table holds, in one short answer (its row count and latest store): unchanged, nothing was
 * stored since the last look, and a refresh need not read the versions again.
 */
export async function budgetsSignature(ch: ClickHouse): Promise<string> {
  const result = await ch.client.query({
    query: `SELECT count() AS n, toString(max(stored_at)) AS at FROM ${tableName(ch, 'budgets')}`,
    format: 'JSONEachRow',
  });
  const [row] = await result.json<{ n: number | string; at: string }>();
  return `${row?.n ?? 0}@${row?.at ?? ''}`;
}

/**
 * The latest version of every budget (deleted ones included), or, with `storedSinceMs`, of the budgets
 * with a version stored since then (a refresh reads what changed, not every budget again).
 */
export async function readBudgets(ch: ClickHouse, storedSinceMs: number | null = null): Promise<BudgetRecord[]> {
  const changed =
    storedSinceMs === null
      ? ''
      : `WHERE id IN (SELECT id FROM ${tableName(ch, 'budgets')} WHERE stored_at >= fromUnixTimestamp64Milli(toInt64({since:Int64}), 'UTC'))`;
  const result = await ch.client.query({
    query: `SELECT toString(id) AS budget_id, argMax(tuple(name, user_id, agent_id, per_call, toString(amount), period,
        time_zone, thresholds, action, filter_service, filter_provider, filter_model,
        toUnixTimestamp64Milli(created_at), toUnixTimestamp64Milli(updated_at),
        toUnixTimestamp64Milli(deleted_at)), version) AS latest, max(version) AS top
      FROM ${tableName(ch, 'budgets')} ${changed} GROUP BY id`,
    ...(storedSinceMs === null ? {} : { query_params: { since: storedSinceMs } }),
    format: 'JSONEachRow',
  });
  type Latest = [
    string,
    string,
    string | null,
    boolean,
    string,
    string,
    string,
    string[],
    string,
    string | null,
    string | null,
    string | null,
    number | string,
    number | string,
    number | string | null,
  ];
  const iso = (ms: number | string) => new Date(Number(ms)).toISOString();
  return (await result.json<{ budget_id: string; latest: Latest; top: number | string }>()).map(
    ({ budget_id, latest, top }) => {
      const [name, user_id, agent_id, per_call, amount, period, time_zone, thresholds, action] = latest;
      const [service, provider, model, created, updated, deleted] = latest.slice(9) as [
        string | null,
        string | null,
        string | null,
        number | string,
        number | string,
        number | string | null,
      ];
      return {
        id: budget_id,
        name,
        user_id,
        agent_id,
        per_call: Boolean(per_call),
        amount,
        period: period as BudgetRecord['period'],
        time_zone,
        thresholds,
        action: action as BudgetRecord['action'],
        filter: {
          ...(service === null ? {} : { service }),
          ...(provider === null ? {} : { provider }),
          ...(model === null ? {} : { model }),
        },
        created_at: iso(created),
        updated_at: iso(updated),
        deleted_at: deleted === null ? null : iso(deleted),
        version: Number(top),
      };
    },
  );
}
