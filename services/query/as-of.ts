import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { TABLES, tableName, type TableKey } from '../shared/clickhouse/tables.ts';

/** The SELECT of each view over usage_events, by the TABLES key of the table it fills. */
export type AsOfSources = ReadonlyMap<TableKey, string>;

const KEY_OF_TABLE = new Map<string, TableKey>(Object.entries(TABLES).map(([key, name]) => [name, key as TableKey]));

/**
 * The views' own SELECTs over usage_events, as the engine keeps them (system.tables): an as-of read
 * runs each over the rows stored by then, so that it is what the view held at that instant, whatever
 * view a query reads. Read once, after the migrations.
 */
export async function loadAsOfSources(ch: ClickHouse): Promise<AsOfSources> {
  const result = await ch.client.query({
    query: `SELECT as_select, create_table_query FROM system.tables
      WHERE database = {database:String} AND engine = 'MaterializedView'`,
    query_params: { database: ch.database },
    format: 'JSONEachRow',
  });
  const sources = new Map<TableKey, string>();
  const events = `${ch.database}.${TABLES.usageEvents}`;
  for (const { as_select, create_table_query } of await result.json<{
    as_select: string;
    create_table_query: string;
  }>()) {
    const target = / TO `?[\w]+`?\.`?([\w]+)`?/.exec(create_table_query)?.[1];
    const key = target === undefined ? undefined : KEY_OF_TABLE.get(target);
    if (key !== undefined && as_select.includes(`FROM ${events} `)) sources.set(key, as_select);
  }
  return sources;
}

/**
 * A read handle of the numbers as they stood at `asOfMs` (docs/cost-queries.md#as-of): usage_events
 * holds only the rows stored by then (a row's `stored_at`: usage and corrections recorded later are
 * left out), each view over it is its own SELECT of those rows, and billing_periods holds the closes
 * made by then (`closed_at`), each reopened only if that was done by then, and tenant_settings the
 * time zones set by then. Exact, and a scan of the tenant's rows: for finance's questions, not for dashboards.
 */
export function asOfReads(ch: ClickHouse, sources: AsOfSources, asOfMs: number): ClickHouse {
  const instant = `fromUnixTimestamp64Milli(toInt64(${Math.trunc(asOfMs)}), 'UTC')`;
  const events = `(SELECT * FROM ${tableName(ch, 'usageEvents')} WHERE stored_at <= ${instant})`;
  const overrides = new Map<string, string>([
    ['usageEvents', events],
    // A month's close counts from its closed_at, a reopen from its reopened_at: the instants they were made.
    [
      'billingPeriods',
      `(SELECT * REPLACE (if(reopened_at <= ${instant}, reopened_at, NULL) AS reopened_at)
        FROM ${tableName(ch, 'billingPeriods')} WHERE closed_at <= ${instant})`,
    ],
    ['tenantSettings', `(SELECT * FROM ${tableName(ch, 'tenantSettings')} WHERE updated_at <= ${instant})`],
  ]);
  const stored = `FROM ${ch.database}.${TABLES.usageEvents} `;
  for (const [key, select] of sources) overrides.set(key, `(${select.replace(stored, `FROM ${events} `)})`);
  return { ...ch, overrides };
}
