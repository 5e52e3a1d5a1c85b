import { auditListSchema, auditQuery } from '../../../schemas/http/admin.ts';
import { readAudit } from '../../shared/clickhouse/tables/audit-log.ts';
import { requestedTenant } from '../../shared/auth/tenant.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import type { Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';

const routes = routeGroup({ tags: ['admin'], access: 'admin' });

/** The audit log: a read of ClickHouse, so the query service's (keys and rates are changed through ingest). */
export function auditRoutes(ch: ClickHouse): Route[] {
  return [
    routes.get('/api/admin/audit', {
      summary: 'Keys created and revoked, rates created and ended: who and when, newest first',
      request: { query: auditQuery },
      response: { schema: auditListSchema },
      // An admin key bound to a tenant reads that tenant's changes only.
      handle: async ({ query, tenant }) =>
        readAudit(ch, query.limit, requestedTenant(tenant, query.user_id, 'read the audit log')),
    }),
  ];
}
