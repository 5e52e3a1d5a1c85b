import { costSummaryQuery } from '../../../schemas/http/query-params.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import type { LiveUsageStore } from '../../shared/redis/live-usage.ts';
import { costSummary } from '../cost-summary.ts';
import { timeZoneOf } from './time-zone.ts';

const TAGS = ['costs'];

export interface CostRoutesDeps {
  readonly ch: ClickHouse;
  readonly liveUsage: LiveUsageStore;
  readonly now?: () => number;
}

export function costRoutes({ ch, liveUsage, now = Date.now }: CostRoutesDeps): Route[] {
  return [
    defineRoute({
      method: 'GET', path: '/api/costs/summary', summary: 'The caller’s total cost, this month’s, and breakdowns by provider and service', tags: TAGS,
      request: { query: costSummaryQuery }, requireUserId: true,
      response: { schema: { type: 'object', required: ['total_cost', 'this_month_cost', 'by_provider'] }, example: { total_cost: '0.048468', this_month_cost: '0.048468', by_provider: { deepgram: '0.02695' } } },
      handle: async ({ query, userId }) => costSummary(ch, liveUsage, userId!, timeZoneOf(query.tz), now()),
    }),
  ];
}
