import { auditListSchema, auditQuery } from '../../../schemas/http/admin.ts';
import { readAudit } from '../../shared/clickhouse/tables/audit-log.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';

/** The audit log: a read of ClickHouse, so the query service's (keys and rates are changed through ingest). */
export function auditRoutes(ch: ClickHouse): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/admin/audit',
      access: 'admin',
      summary: 'Keys created and revoked, rates created and ended: who and when, newest first',
      tags: ['admin'],
      request: { query: auditQuery },
      response: { schema: auditListSchema },
      handle: async ({ query, tenant }) => {
        // An admin key bound to a tenant reads that tenant's changes only.
        if (query.user_id !== undefined) assertActsFor(tenant, query.user_id, 'read the audit log');
        return readAudit(ch, query.limit, query.user_id ?? tenant);
      },
    }),
  ];
}
