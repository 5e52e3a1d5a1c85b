import type { ClickHouse } from './client.ts';
import { DISTRIBUTED_SUFFIX } from './cluster-ddl.ts';

/** The closed set of tables; SQL names a table only through this map, never from input. */
export const TABLES = {
  usageEvents: 'usage_events',
  usageEventIds: 'usage_event_ids_by_user',
  usageRollup15m: 'usage_rollup_15m',
  usageTotals15m: 'usage_totals_15m',
  usageTotalsDaily: 'usage_totals_daily',
  usageSessionsDaily: 'usage_sessions_daily',
  usageSessionFirsts: 'usage_session_firsts',
  usageSessionStarts: 'usage_session_starts',
  usageByAgentDaily: 'usage_by_agent_daily',
  usageBySession: 'usage_by_session',
  unpricedUsage: 'unpriced_usage',
  usagePartsTotals: 'usage_parts_totals',
  usagePartsBySession: 'usage_parts_by_session',
  agentNames: 'agent_names',
  sessions: 'sessions',
  sessionsCurrent: 'sessions_current',
  sessionsByUser: 'sessions_by_user',
  sessionsByRoom: 'sessions_by_room',
  telephonyNumberHolders: 'telephony_number_holders',
  agentsByUser: 'agents_by_user',
  telephonyNumbers: 'telephony_numbers',
  agents: 'agents',
  transcripts: 'transcripts',
  deadLetters: 'dead_letters',
  rateEntries: 'rate_entries',
  apiKeys: 'api_keys',
  auditLog: 'audit_log',
  billingPeriods: 'billing_periods',
  budgets: 'budgets',
  tenantSettings: 'tenant_settings',
  webhookEndpoints: 'webhook_endpoints',
  webhookDeliveries: 'webhook_deliveries',
  webhookAttempts: 'webhook_attempts',
} as const;

export type TableKey = keyof typeof TABLES;

/** The entries of TABLES that are views: on a cluster they are read as they are, not through `_all`. */
const VIEWS: ReadonlySet<TableKey> = new Set(['sessionsCurrent']);

/**
 * The table a statement names: on a cluster (CLICKHOUSE_CLUSTER) its Distributed table (cluster-ddl.ts);
 * a handle with `overrides` (an as-of read, services/query/as-of.ts) names a subquery in its place.
 */
export function tableName(ch: Pick<ClickHouse, 'database' | 'cluster' | 'overrides'>, table: TableKey): string {
  const override = ch.overrides?.get(table);
  if (override !== undefined) return override;
  const distributed = ch.cluster !== null && ch.cluster !== undefined && !VIEWS.has(table);
  return `${ch.database}.${TABLES[table]}${distributed ? DISTRIBUTED_SUFFIX : ''}`;
}
