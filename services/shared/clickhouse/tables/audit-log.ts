import type { auditListSchema } from '../../../../schemas/http/admin.ts';
import type { WireOf } from '../../../../schemas/http/response-parts.ts';
import type { AuditRecord } from '../../../../schemas/records/api-key.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** audit_log: one row per administrative change (keys, tenants' rates). Read by GET /api/admin/audit. */
export type AuditRow = AuditRecord & { readonly record_id: string };

export function auditRow(entry: AuditRecord, recordId: string): AuditRow {
  return { ...entry, record_id: recordId };
}

/** One change as GET /api/admin/audit lists it. */
export type StoredAudit = WireOf<typeof auditListSchema>[number];

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
  return (await result.json<Row>()).map(({ at_ms, detail, ...row }) => ({
    ...row,
    at: new Date(Number(at_ms)).toISOString(),
    detail: JSON.parse(detail) as StoredAudit['detail'],
  }));
}
