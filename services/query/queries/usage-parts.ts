import type { partTotalSchema } from '../../../schemas/http/cost-responses.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import type { CostDimension } from '../../domain/pricing/index.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import { compareText, money } from '../cost-tally.ts';
import type { Read } from './together.ts';

/** One priced part, summed: what a token kind (or a quantity price) came to. */
export type PartTotal = WireOf<typeof partTotalSchema>;

export interface PartRow {
  readonly provider?: string;
  readonly event_type: string;
  readonly service: string;
  readonly dimension: CostDimension;
  readonly unit: string;
  readonly quantity: string;
  readonly cost: string;
}

/** `key` of a row → its parts, in the order of the query (dimension, then unit). */
function grouped(rows: readonly PartRow[], key: (row: PartRow) => string): Map<string, PartTotal[]> {
  const parts = new Map<string, PartTotal[]>();
  for (const row of rows) {
    const list = parts.get(key(row)) ?? [];
    list.push({ dimension: row.dimension, unit: row.unit, quantity: money(row.quantity), cost: money(row.cost) });
    parts.set(key(row), list);
  }
  return parts;
}

export const serviceKey = (eventType: string, service: string) => `${eventType}\u0000${service}`;
export const itemKey = (provider: string, eventType: string, service: string) =>
  `${provider}\u0000${eventType}\u0000${service}`;

/** The read of a tenant's priced parts over all time, by event type and service (usage_parts_totals, migration 012). */
export function partsByServiceRead(ch: ClickHouse, userId: string): Read {
  return {
    sql: `SELECT event_type, service, dimension, unit, sum(quantity) AS quantity, sum(cost) AS cost
      FROM ${tableName(ch, 'usagePartsTotals')} WHERE user_id = {user:String}
      GROUP BY event_type, service, dimension, unit`,
    params: { user: userId },
  };
}

/** partsByServiceRead's rows by event type and service, each service's parts by dimension, then unit. */
export function partsByService(rows: readonly PartRow[]): Map<string, PartTotal[]> {
  const ordered = [...rows].sort(
    (a, b) =>
      compareText(a.event_type, b.event_type) ||
      compareText(a.service, b.service) ||
      compareText(a.dimension, b.dimension) ||
      compareText(a.unit, b.unit),
  );
  return grouped(ordered, (row) => serviceKey(row.event_type, row.service));
}

/** One session's priced parts, by provider, event type and service (usage_parts_by_session). */
export async function partsBySessionItem(
  ch: ClickHouse,
  userId: string,
  sessionId: string,
): Promise<Map<string, PartTotal[]>> {
  const result = await ch.client.query({
    query: `SELECT provider, event_type, service, dimension, unit, sum(quantity) AS quantity, sum(cost) AS cost
      FROM ${tableName(ch, 'usagePartsBySession')} WHERE user_id = {user:String} AND session_id = {session:UUID}
      GROUP BY provider, event_type, service, dimension, unit ORDER BY provider, event_type, service, dimension, unit`,
    query_params: { user: userId, session: sessionId },
    format: 'JSONEachRow',
  });
  return grouped(await result.json<PartRow>(), (row) => itemKey(row.provider!, row.event_type, row.service));
}
