import type { PeriodRecord } from '../../../../schemas/records/period.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** billing_periods (migration 017): every version of a tenant's closed month, the highest wins. */
export type PeriodRow = PeriodRecord & { readonly record_id: string };

export function periodRow(period: PeriodRecord, recordId: string): PeriodRow {
  return { ...period, record_id: recordId };
}

/** A closed month of a tenant: when it was closed (epoch ms) and its version. */
export interface ClosedPeriod {
  readonly user_id: string;
  readonly period: string;
  readonly closed_ms: number;
  readonly version: number;
}

/** The closed months of one tenant, or of every tenant (`null`): a few rows per tenant and year. */
export async function readClosedPeriods(ch: ClickHouse, userId: string | null): Promise<ClosedPeriod[]> {
  const result = await ch.client.query({
    query: `SELECT user_id, period, toString(toUnixTimestamp64Milli(argMax(closed_at, version))) AS closed_ms,
        max(version) AS top_version
      FROM ${tableName(ch, 'billingPeriods')}
      ${userId === null ? '' : 'WHERE user_id = {user:String}'}
      GROUP BY user_id, period
      HAVING argMax(status, version) = 'closed'`,
    query_params: userId === null ? {} : { user: userId },
    format: 'JSONEachRow',
  });
  return (
    await result.json<{ user_id: string; period: string; closed_ms: string; top_version: string | number }>()
  ).map((row) => ({
    user_id: row.user_id,
    period: row.period,
    closed_ms: Number(row.closed_ms),
    version: Number(row.top_version),
  }));
}
