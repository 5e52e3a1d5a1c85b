import type { ApiKeyRecord } from '../../../../schemas/records/api-key.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** api_keys: every version of every API key, the secret only as a salted hash. Read whole by every serving process (services/shared/auth/key-registry.ts). */
export type ApiKeyRow = ApiKeyRecord & { readonly record_id: string };

export function apiKeyRow(key: ApiKeyRecord, recordId: string): ApiKeyRow {
  return { ...key, record_id: recordId };
}

/** The latest version of every stored key (salt and hash included: they never leave the process). */
export async function readStoredKeys(ch: ClickHouse): Promise<ApiKeyRecord[]> {
  const result = await ch.client.query({
    query: `SELECT toString(id) AS id, prefix, name, toString(scope) AS scope, user_id, salt, secret_hash,
        toString(toUnixTimestamp64Milli(created_at)) AS created_ms,
        if(expires_at IS NULL, NULL, toString(toUnixTimestamp64Milli(assumeNotNull(expires_at)))) AS expires_ms,
        if(revoked_at IS NULL, NULL, toString(toUnixTimestamp64Milli(assumeNotNull(revoked_at)))) AS revoked_ms,
        created_by, created_while_auth_off, toString(version) AS version
      FROM ${tableName(ch, 'apiKeys')} FINAL
      ORDER BY created_at, id`,
    format: 'JSONEachRow',
  });
  type Row = Omit<ApiKeyRecord, 'created_at' | 'expires_at' | 'revoked_at' | 'version'> & {
    created_ms: string;
    expires_ms: string | null;
    revoked_ms: string | null;
    version: string;
  };
  const iso = (ms: string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
  return (await result.json<Row>()).map(({ created_ms, expires_ms, revoked_ms, version, ...row }) => ({
    ...row,
    created_at: iso(created_ms)!,
    expires_at: iso(expires_ms),
    revoked_at: iso(revoked_ms),
    version: Number(version),
  }));
}
