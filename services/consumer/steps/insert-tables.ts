import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { insertRows, type InsertedTable } from '../../shared/clickhouse/insert-rows.ts';
import { storeIsolating, type Refused } from '../../shared/clickhouse/refused-rows.ts';
import type { TableEntry } from './route-records.ts';

/**
 * Step 4, insert: one insert per table under the round's token (the materialized views are written by
 * usage_events' insert). Isolating, rows ClickHouse refuses for what they hold are split off and
 * returned, and the rest is stored: retried, they would hold up every record behind them for ever.
 * Without isolation (tests) a refusal fails the whole call. Any other error fails it either way, and
 * the round is tried again.
 */
export async function insertTables<O>(
  ch: ClickHouse,
  tables: ReadonlyMap<InsertedTable, readonly TableEntry<O>[]>,
  token: string,
  { isolate }: { readonly isolate: boolean },
): Promise<Refused<TableEntry<O>>[]> {
  const refused: Refused<TableEntry<O>>[] = [];
  for (const [table, entries] of tables) {
    const insert = (part: readonly TableEntry<O>[], partToken: string) =>
      insertRows(
        ch,
        table,
        part.map(({ row }) => row),
        partToken,
      );
    if (!isolate) await insert(entries, token);
    else refused.push(...(await storeIsolating(entries, token, insert)));
  }
  return refused;
}
