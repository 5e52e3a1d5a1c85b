import type { WebhookEndpointRecord } from '../../../../schemas/records/webhook-endpoint.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** webhook_endpoints (migration 019): every version of every endpoint, the highest wins. */
export type WebhookEndpointRow = Omit<WebhookEndpointRecord, 'secrets'> & {
  readonly secrets: string;
  readonly record_id: string;
};

export function webhookEndpointRow(endpoint: WebhookEndpointRecord, recordId: string): WebhookEndpointRow {
  return { ...endpoint, secrets: JSON.stringify(endpoint.secrets), record_id: recordId };
}

const instant = (column: string) => `if(isNull(${column}), NULL, toString(toUnixTimestamp64Milli(${column})))`;

/** The latest version of every endpoint, deleted ones included (a few per tenant). */
export async function readWebhookEndpoints(ch: ClickHouse): Promise<WebhookEndpointRecord[]> {
  const result = await ch.client.query({
    query: `SELECT toString(id) AS endpoint_key, user_id, url, events, description, secrets,
        ${instant('created_at')} AS created_ms, ${instant('disabled_at')} AS disabled_ms, disabled_reason,
        ${instant('deleted_at')} AS deleted_ms, toString(version) AS version
      FROM ${tableName(ch, 'webhookEndpoints')} FINAL
      ORDER BY created_at, endpoint_key`,
    format: 'JSONEachRow',
  });
  type Row = Omit<WebhookEndpointRecord, 'id' | 'secrets' | 'created_at' | 'disabled_at' | 'deleted_at' | 'version'> & {
    endpoint_key: string;
    secrets: string;
    created_ms: string;
    disabled_ms: string | null;
    deleted_ms: string | null;
    version: string;
  };
  const iso = (ms: string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
  return (await result.json<Row>()).map(
    ({ endpoint_key, created_ms, disabled_ms, deleted_ms, secrets, version, ...row }) => ({
      ...row,
      id: endpoint_key,
      secrets: JSON.parse(secrets) as WebhookEndpointRecord['secrets'],
      created_at: iso(created_ms)!,
      disabled_at: iso(disabled_ms),
      deleted_at: iso(deleted_ms),
      version: Number(version),
    }),
  );
}
