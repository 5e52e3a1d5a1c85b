import type { Route } from '../shared/http/define-route.ts';
import type { Infrastructure } from '../shared/infrastructure.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import { costRoutes } from './routes/cost-routes.ts';

export interface QueryDeps {
  readonly infra: Infrastructure;
  readonly liveUsage: LiveUsageStore;
}

/** The cost routes over ClickHouse (and the live usage of calls in progress). */
export function startQuery({ infra, liveUsage }: QueryDeps): Route[] {
  return costRoutes({ ch: infra.clickhouseReads, liveUsage });
}
