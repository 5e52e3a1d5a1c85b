import type { ApiKeyRecord } from '../../../schemas/records/api-key.ts';
import type { ClickHouse } from '../clickhouse/client.ts';
import { tableName } from '../clickhouse/tables.ts';

/** The latest version of every stored key (salt and hash included: they never leave the process). */
export async function readStoredKeys(ch: ClickHouse): Promise<ApiKeyRecord[]> {
  const result = await ch.client.query({
    query: `SELECT toString(id) AS id, prefix, name, toString(scope) AS scope, user_id, salt, secret_hash,
        toString(toUnixTimestamp64Milli(created_at)) AS created_ms,
        if(expires_at IS NULL, NULL, toString(toUnixTimestamp64Milli(assumeNotNull(expires_at)))) AS expires_ms,
        if(revoked_at IS NULL, NULL, toString(toUnixTimestamp64Milli(assumeNotNull(revoked_at)))) AS revoked_ms,
        created_by, toString(version) AS version
      FROM ${tableName(ch, 'apiKeys')} FINAL
      ORDER BY created_at, id`,
    format: 'JSONEachRow',
  });
  type Row = Omit<ApiKeyRecord, 'created_at' | 'expires_at' | 'revoked_at' | 'version'> & { created_ms: string; expires_ms: string | null; revoked_ms: string | null; version: string };
  const iso = (ms: string | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
  return (await result.json<Row>()).map(({ created_ms, expires_ms, revoked_ms, version, ...row }) => ({
    ...row,
    created_at: iso(created_ms)!,
    expires_at: iso(expires_ms),
    revoked_at: iso(revoked_ms),
    version: Number(version),
  }));
}

export interface StoredAudit {
  readonly id: string;
  readonly action: string;
  readonly subject_id: string;
  readonly actor_key_id: string;
  readonly user_id: string | null;
  readonly at: string;
  readonly detail: unknown;
}

/** The newest `limit` administrative changes, of one tenant when `userId` is given. */
export async function readAudit(ch: ClickHouse, limit: number, userId: string | null): Promise<StoredAudit[]> {
  const result = await ch.client.query({
    query: `SELECT toString(id) AS id, toString(action) AS action, subject_id, actor_key_id, user_id,
        toString(toUnixTimestamp64Milli(at)) AS at_ms, detail
      FROM ${tableName(ch, 'auditLog')} FINAL
      ${userId === null ? '' : 'WHERE user_id = {user:String}'}
      ORDER BY at DESC, id DESC
      LIMIT {limit:UInt32}`,
    query_params: { limit, ...(userId === null ? {} : { user: userId }) },
    format: 'JSONEachRow',
  });
  type Row = Omit<StoredAudit, 'at' | 'detail'> & { at_ms: string; detail: string };
  return (await result.json<Row>()).map(({ at_ms, detail, ...row }) => ({ ...row, at: new Date(Number(at_ms)).toISOString(), detail: JSON.parse(detail) as unknown }));
}
