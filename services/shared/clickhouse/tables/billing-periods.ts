import type { PeriodRecord } from '../../../../schemas/records/period.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** billing_periods (migration 017): every version of a tenant's month, the highest revision of each wins. */
export type PeriodRow = PeriodRecord & { readonly record_id: string };

export function periodRow(period: PeriodRecord, recordId: string): PeriodRow {
  return { ...period, record_id: recordId };
}

/** One close of a tenant's month: when it was made, and when it was undone (null while it holds). */
export interface PeriodVersion {
  readonly user_id: string;
  readonly period: string;
  readonly version: number;
  readonly closed_ms: number;
  readonly reopened_ms: number | null;
}

/** A month whose latest close holds. */
export type ClosedPeriod = PeriodVersion & { readonly reopened_ms: null };

/** Every version of one tenant's months, or of every tenant's (`null`), oldest first: a few rows per tenant and year. */
export async function readPeriodVersions(ch: ClickHouse, userId: string | null): Promise<PeriodVersion[]> {
  const result = await ch.client.query({
    query: `SELECT user_id, period, version, toString(toUnixTimestamp64Milli(argMax(closed_at, revision))) AS closed_ms,
        toString(toUnixTimestamp64Milli(argMax(reopened_at, revision))) AS reopened_ms
      FROM ${tableName(ch, 'billingPeriods')}
      ${userId === null ? '' : 'WHERE user_id = {user:String}'}
      GROUP BY user_id, period, version
      ORDER BY user_id, period, version`,
    query_params: userId === null ? {} : { user: userId },
    format: 'JSONEachRow',
  });
  type Row = {
    user_id: string;
    period: string;
    version: number | string;
    closed_ms: string;
    reopened_ms: string | null;
  };
  return (await result.json<Row>()).map((row) => ({
    user_id: row.user_id,
    period: row.period,
    version: Number(row.version),
    closed_ms: Number(row.closed_ms),
    reopened_ms: row.reopened_ms === null ? null : Number(row.reopened_ms),
  }));
}

/** The months whose latest close holds, of one tenant or of every tenant. */
export async function readClosedPeriods(ch: ClickHouse, userId: string | null): Promise<ClosedPeriod[]> {
  return latestVersions(await readPeriodVersions(ch, userId)).filter(
    (version): version is ClosedPeriod => version.reopened_ms === null,
  );
}

/** The latest version of each month among `versions`. */
export function latestVersions(versions: readonly PeriodVersion[]): PeriodVersion[] {
  const latest = new Map<string, PeriodVersion>();
  for (const version of versions) {
    const key = `${version.user_id}\u0000${version.period}`;
    if ((latest.get(key)?.version ?? 0) < version.version) latest.set(key, version);
  }
  return [...latest.values()];
}
