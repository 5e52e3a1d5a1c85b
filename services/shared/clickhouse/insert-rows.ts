import type { ClickHouse } from './client.ts';
import { tableName, type TableKey } from './tables.ts';

/**
 * One insert of a batch into one table. The token makes a repeat of the same insert a no-op
 * (non_replicated_deduplication_window on every table), and the same holds for the materialized
 * views fed by it. Every insert must carry its own token: chdb's connection applies these settings
 * as session SETs that outlive the statement, so a later insert without one would inherit the last
 * token and be dropped as its repeat.
 */
export async function insertRows(ch: ClickHouse, table: TableKey, rows: readonly Record<string, unknown>[], token: string): Promise<void> {
  if (rows.length === 0) return;
  await ch.client.insert({
    table: tableName(ch, table),
    values: rows as Record<string, unknown>[],
    format: 'JSONEachRow',
    clickhouse_settings: {
      insert_deduplicate: 1,
      insert_deduplication_token: `${token}:${table}`,
      deduplicate_blocks_in_dependent_materialized_views: 1,
      // usage_events feeds six rollups: writing them side by side roughly halves a small insert.
      parallel_view_processing: 1,
      date_time_input_format: 'best_effort',
    },
  });
}
