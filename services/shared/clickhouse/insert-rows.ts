import type { ClickHouse } from './client.ts';
import { tableName } from './tables.ts';
import type { AgentRow } from './tables/agents.ts';
import type { ApiKeyRow } from './tables/api-keys.ts';
import type { AuditRow } from './tables/audit-log.ts';
import type { PeriodRow } from './tables/billing-periods.ts';
import type { TenantSettingsRow } from './tables/tenant-settings.ts';
import type { BudgetRow } from './tables/budgets.ts';
import type { DeadLetterRow } from './tables/dead-letters.ts';
import type { RateEntryRow } from './tables/rate-entries.ts';
import type { SessionRow } from './tables/sessions.ts';
import type { TelephonyNumberRow } from './tables/telephony-numbers.ts';
import type { TranscriptRow } from './tables/transcripts.ts';
import type { UsageEventRow } from './tables/usage-events.ts';
import type { WebhookEndpointRow } from './tables/webhook-endpoints.ts';

/** The tables callmeter inserts into, and the row each takes (the views fill the others). */
export interface InsertedRows {
  readonly usageEvents: UsageEventRow;
  readonly sessions: SessionRow;
  readonly agents: AgentRow;
  readonly telephonyNumbers: TelephonyNumberRow;
  readonly transcripts: TranscriptRow;
  readonly rateEntries: RateEntryRow;
  readonly apiKeys: ApiKeyRow;
  readonly auditLog: AuditRow;
  readonly billingPeriods: PeriodRow;
  readonly budgets: BudgetRow;
  readonly tenantSettings: TenantSettingsRow;
  readonly deadLetters: DeadLetterRow;
  readonly webhookEndpoints: WebhookEndpointRow;
}

export type InsertedTable = keyof InsertedRows;

/** One row and its table, for code that routes rows of several tables. */
export type TableRow = { [K in InsertedTable]: { readonly table: K; readonly row: InsertedRows[K] } }[InsertedTable];

/**
 * One insert of a batch into one table. The token makes a repeat of the same insert a no-op
 * (non_replicated_deduplication_window on every table), and the same holds for the materialized
 * views fed by it. Every insert must carry its own token: chdb's connection applies these settings
 * as session SETs that outlive the statement, so a later insert without one would inherit the last
 * token and be dropped as its repeat.
 */
export async function insertRows<K extends InsertedTable>(
  ch: ClickHouse,
  table: K,
  rows: readonly InsertedRows[K][],
  token: string,
): Promise<void> {
  if (rows.length === 0) return;
  const clickhouse_settings = {
    insert_deduplicate: 1,
    insert_deduplication_token: `${token}:${table}`,
    deduplicate_blocks_in_dependent_materialized_views: 1,
    // usage_events feeds six rollups: writing them side by side roughly halves a small insert.
    parallel_view_processing: 1,
    date_time_input_format: 'best_effort',
  } as const;
  const objects = rows as readonly object[] as Record<string, unknown>[];
  const compact = compactRows(objects);
  if (compact === null)
    await ch.client.insert({
      table: tableName(ch, table),
      values: objects,
      format: 'JSONEachRow',
      clickhouse_settings,
    });
  else
    await ch.client.insert<unknown[]>({
      table: tableName(ch, table),
      values: compact.values,
      columns: compact.columns,
      format: 'JSONCompactEachRow',
      clickhouse_settings,
    });
}

/**
 * Rows as JSONCompactEachRow (arrays under one column list) when every row has the first row's
 * columns in the same order and none is undefined, as the row builders give them: the engine parses that
 * markedly faster than JSONEachRow's keyed objects (bench/results/dated-runs.md). Null: rows of other shapes,
 * sent as JSONEachRow.
 */
function compactRows(
  rows: readonly Record<string, unknown>[],
): { values: unknown[][]; columns: [string, ...string[]] } | null {
  const columns = Object.keys(rows[0]!);
  const values: unknown[][] = [];
  for (const row of rows) {
    const keys = Object.keys(row);
    if (keys.length !== columns.length || keys.some((key, i) => key !== columns[i])) return null;
    const value = columns.map((column) => row[column]);
    // JSONEachRow leaves an undefined key out (the column's default); an array cannot.
    if (value.includes(undefined)) return null;
    values.push(value);
  }
  return { values, columns: columns as [string, ...string[]] };
}
