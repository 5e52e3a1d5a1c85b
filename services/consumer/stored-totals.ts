import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { TABLES, tableName, type TableKey } from '../shared/clickhouse/tables.ts';

/** Every table a usage_events insert feeds through a materialized view that counts events and cost. */
export const USAGE_ROLLUPS = [
  'usageRollup15m',
  'usageTotals15m',
  'usageTotalsDaily',
  'usageByAgentDaily',
  'usageBySession',
] as const satisfies readonly TableKey[];

export type StoredTotals = Record<string, { n: string; cost?: string }>;

/**
 * The event count and cost sum of usage_events, of every rollup and of the event-id table (by table
 * name), so that a test can check that a replay or a retry was counted once everywhere, not only in
 * the table it happens to read; of one tenant only when `userId` is given (a check beside a tenant
 * that keeps posting). A full scan of each: for tests and the fault suite, not for serving.
 */
export async function storedTotals(ch: ClickHouse, userId: string | null = null): Promise<StoredTotals> {
  const where = userId === null ? '' : ' WHERE user_id = {user:String}';
  const one = async (sql: string) =>
    (
      await (
        await ch.client.query({
          query: `${sql}${where}`,
          ...(userId === null ? {} : { query_params: { user: userId } }),
          format: 'JSONEachRow',
        })
      ).json<{ n: string; cost?: string }>()
    )[0]!;
  const totals: StoredTotals = {};
  totals.usage_events = await one(
    `SELECT toString(sum(toInt64(weight))) AS n, toString(sum(toDecimal256(cost, 18))) AS cost FROM ${tableName(ch, 'usageEvents')}`,
  );
  for (const table of USAGE_ROLLUPS) {
    totals[TABLES[table]] = await one(
      `SELECT toString(sum(events)) AS n, toString(sum(cost)) AS cost FROM ${tableName(ch, table)}`,
    );
  }
  totals[TABLES.usageEventIds] = await one(`SELECT toString(count()) AS n FROM ${tableName(ch, 'usageEventIds')}`);
  return totals;
}
