import type { TenantSettingsRecord } from '../../../../schemas/records/tenant-settings.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** tenant_settings (migration 018): each tenant's billing time zone, the latest `updated_at` wins. */
export type TenantSettingsRow = TenantSettingsRecord & { readonly record_id: string };

export function tenantSettingsRow(settings: TenantSettingsRecord, recordId: string): TenantSettingsRow {
  return { ...settings, record_id: recordId };
}

/** The time zone a tenant without settings bills in. */
export const DEFAULT_BILLING_TIME_ZONE = 'UTC';

export interface TenantSettings {
  readonly user_id: string;
  readonly time_zone: string;
  readonly updated_ms: number;
}

/** The settings of one tenant, or of every tenant that has any (`null`): a row per tenant. */
export async function readTenantSettings(ch: ClickHouse, userId: string | null): Promise<TenantSettings[]> {
  const result = await ch.client.query({
    query: `SELECT user_id, argMax(time_zone, updated_at) AS time_zone,
        toString(toUnixTimestamp64Milli(max(updated_at))) AS updated_ms
      FROM ${tableName(ch, 'tenantSettings')}
      ${userId === null ? '' : 'WHERE user_id = {user:String}'}
      GROUP BY user_id`,
    query_params: userId === null ? {} : { user: userId },
    format: 'JSONEachRow',
  });
  return (await result.json<{ user_id: string; time_zone: string; updated_ms: string }>()).map((row) => ({
    user_id: row.user_id,
    time_zone: row.time_zone,
    updated_ms: Number(row.updated_ms),
  }));
}

/** The time zone one tenant's months are in. */
export async function readBillingTimeZone(ch: ClickHouse, userId: string): Promise<string> {
  return (await readTenantSettings(ch, userId))[0]?.time_zone ?? DEFAULT_BILLING_TIME_ZONE;
}
