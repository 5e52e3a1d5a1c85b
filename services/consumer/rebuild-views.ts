import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { tableName, type TableKey } from '../shared/clickhouse/tables.ts';
import type { Logger } from '../shared/logger.ts';

/**
 * Every materialized view the migrations create, and the table it writes. rebuildViews refuses a
 * view missing here, so a migration that adds one without it fails the tests.
 */
export const MATERIALIZED_VIEWS = {
  usage_rollup_15m_mv: 'usageRollup15m',
  usage_totals_15m_mv: 'usageTotals15m',
  usage_totals_daily_mv: 'usageTotalsDaily',
  usage_sessions_daily_mv: 'usageSessionsDaily',
  usage_session_firsts_mv: 'usageSessionFirsts',
  usage_session_starts_mv: 'usageSessionStarts',
  usage_by_agent_daily_mv: 'usageByAgentDaily',
  usage_by_session_mv: 'usageBySession',
  unpriced_usage_mv: 'unpricedUsage',
  usage_parts_totals_mv: 'usagePartsTotals',
  usage_parts_by_session_mv: 'usagePartsBySession',
  usage_event_ids_by_user_mv: 'usageEventIds',
  agent_names_mv: 'agentNames',
  sessions_by_user_mv: 'sessionsByUser',
  sessions_by_room_mv: 'sessionsByRoom',
  telephony_number_holders_mv: 'telephonyNumberHolders',
  agents_by_user_mv: 'agentsByUser',
} as const satisfies Record<string, TableKey>;

type ViewName = keyof typeof MATERIALIZED_VIEWS;

/**
 * Empties the table of every materialized view and fills it again from the view's own SELECT over
 * its source, so that each holds exactly what its source holds. Run by the process that writes,
 * before it consumes or serves anything, when the embedded engine was not closed cleanly: a process
 * killed in the middle of an insert can leave one view's part without its deduplication log entry
 * (the view then takes the replayed block twice) or the entry without the part (it never takes it),
 * while the source table and the other views are right. A full scan of the sources: seconds at
 * millions of events, and only after a crash.
 */
export async function rebuildViews(ch: ClickHouse, log: Logger): Promise<void> {
  const result = await ch.client.query({
    query: `SELECT name, as_select FROM system.tables WHERE database = {database:String} AND engine = 'MaterializedView' ORDER BY name`,
    query_params: { database: ch.database },
    format: 'JSONEachRow',
  });
  const views = await result.json<{ name: string; as_select: string }>();
  const unknown = views.filter(({ name }) => !(name in MATERIALIZED_VIEWS)).map(({ name }) => name);
  if (unknown.length > 0) throw new Error(`materialized views missing from MATERIALIZED_VIEWS: ${unknown.join(', ')}`);
  const started = Date.now();
  for (const { name, as_select } of views) {
    const target = tableName(ch, MATERIALIZED_VIEWS[name as ViewName]);
    // By name, as the view itself writes: INSERT … SELECT alone would match the columns by position.
    const described = await ch.client.query({ query: `DESCRIBE TABLE (${as_select})`, format: 'JSONEachRow' });
    const columns = (await described.json<{ name: string }>()).map(({ name }) => `\`${name.replaceAll('`', '\\`')}\``);
    await ch.client.command({ query: `TRUNCATE TABLE ${target}` });
    // Deduplication off: a rebuilt block must never be taken for the repeat of an earlier insert.
    await ch.client.command({
      query: `INSERT INTO ${target} (${columns.join(', ')}) ${as_select}`,
      clickhouse_settings: { insert_deduplicate: 0 },
    });
  }
  log.warn({ views: views.length, ms: Date.now() - started }, 'clickhouse_views_rebuilt');
}
