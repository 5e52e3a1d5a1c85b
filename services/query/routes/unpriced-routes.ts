import { unpricedUsageResponse } from '../../../schemas/http/cost-responses.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import type { Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import { unpricedUsage } from '../unpriced-usage.ts';

const routes = routeGroup({ tags: ['costs'], access: 'read', requireUserId: true });
/** Nothing silently zero: what of the caller's usage no price applied to. */
export function unpricedRoutes(ch: ClickHouse): Route[] {
  return [
    routes.get('/api/costs/unpriced', {
      summary: 'The caller’s usage stored unpriced (cost 0), by provider, model and event type',
      response: unpricedUsageResponse,
      handle: async ({ userId }) => unpricedUsage(ch, userId!),
    }),
  ];
}
