import {
  costByAgentResponse,
  costSummaryResponse,
  costTimelineResponse,
} from '../../../schemas/http/cost-responses.ts';
import { costBreakdownResponse, sessionCostCardResponse } from '../../../schemas/http/session-cost-responses.ts';
import {
  costBreakdownQuery,
  costByAgentQuery,
  costSummaryQuery,
  costTimelineQuery,
} from '../../../schemas/http/query-params.ts';
import type { Budgets } from '../../domain/budgets/index.ts';
import type { AsOfSources } from '../as-of.ts';
import { readPointOf } from './as-of-param.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { LiveUsageStore } from '../../shared/redis/live-usage.ts';
import { READ_AFRESH, type Answers } from '../answer-cache.ts';
import { costBreakdown } from '../cost-breakdown.ts';
import { costByAgent } from '../cost-by-agent.ts';
import { costSummary } from '../cost-summary.ts';
import { costTimeline } from '../cost-timeline.ts';
import { sessionCostCard } from '../session-cost-card.ts';
import { agentsCsv, timelineCsv, wantsCsv } from '../csv.ts';
import type { Period } from '../timeline-buckets.ts';
import { dateRangeOf } from './date-bounds.ts';
import { timeZoneOf } from './time-zone.ts';

const CURRENCY = 'USD';
/** An as-of breakdown's live entries: none, since they are of now. */
const NO_LIVE_USAGE: LiveUsageStore = { record: async () => undefined, read: async () => [] };
/** The caller's costs: x-user-id required (401 after validation). */
const callerCosts = routeGroup({ tags: ['costs'], access: 'read', requireUserId: true, readsCallerTenant: true });
/** One call's costs, with or without x-user-id (with it, only that tenant's call is read). */
const sessionCosts = routeGroup({
  tags: ['costs'],
  access: 'read',
  readsCallerTenant: true,
  responses: { 404: errorDoc('Unknown session (or, with x-user-id, another user’s)', 'Session not found') },
});

export interface CostRoutesDeps {
  readonly ch: ClickHouse;
  /** The views' SELECTs, for reads with `as_of` (as-of.ts). */
  readonly asOfSources: AsOfSources;
  readonly liveUsage: LiveUsageStore;
  /** Where summary, timeline and by-agent answers are kept between stored batches; absent: read afresh. */
  readonly answers?: Answers;
  /** The per-call caps a call's cost card measures it against. */
  readonly budgets: Pick<Budgets, 'all'>;
  readonly now?: () => number;
}

export function costRoutes({
  ch,
  asOfSources,
  liveUsage,
  answers = READ_AFRESH,
  budgets,
  now = Date.now,
}: CostRoutesDeps): Route[] {
  /** The handle and "now" of a read, and the answers it may reuse: an as-of read is never cached. */
  const pointOf = (asOf: Date | undefined) => {
    const point = readPointOf(ch, asOfSources, asOf, now());
    return { ...point, answers: point.asOf ? READ_AFRESH : answers };
  };
  return [
    callerCosts.get('/api/costs/summary', {
      summary: 'The caller’s total cost, this month’s, and breakdowns by provider and service',
      request: { query: costSummaryQuery },
      response: costSummaryResponse,
      handle: async ({ query, userId }) => {
        const point = pointOf(query.as_of);
        return costSummary(point.ch, userId!, timeZoneOf(query.tz), point.nowMs, point.answers, { live: !point.asOf });
      },
    }),
    callerCosts.get('/api/costs/timeline', {
      summary: 'The caller’s cost per day, week (from Monday) or month of a zone, every bucket of the range',
      request: { query: costTimelineQuery },
      response: costTimelineResponse,
      handle: async ({ query, userId }, ctx) => {
        const timeZone = timeZoneOf(query.tz);
        const point = pointOf(query.as_of);
        const points = await costTimeline(
          point.ch,
          userId!,
          dateRangeOf(query, timeZone),
          query.period as Period,
          timeZone,
          point.nowMs,
          point.answers,
        );
        return wantsCsv(query.format, ctx.get('accept')) ? timelineCsv(points, CURRENCY) : points;
      },
    }),
    callerCosts.get('/api/costs/by-agent', {
      summary: 'The caller’s cost per agent, most expensive first',
      request: { query: costByAgentQuery },
      response: costByAgentResponse,
      handle: async ({ query, userId }, ctx) => {
        const range = dateRangeOf(query, timeZoneOf(query.tz));
        const point = pointOf(query.as_of);
        const agents = await costByAgent(point.ch, userId!, range, query.limit, point.answers);
        return wantsCsv(query.format, ctx.get('accept')) ? agentsCsv(agents, CURRENCY) : agents;
      },
    }),
    sessionCosts.get('/api/sessions/{session_id}/cost-breakdown', {
      summary: 'What one call cost: its events, per type and per provider and service',
      request: { query: costBreakdownQuery },
      response: costBreakdownResponse,
      handle: async ({ path, query, userId }) => {
        const point = pointOf(query.as_of);
        // As of an instant, usage not stored by then is left out, as the live entries are.
        return costBreakdown(point.ch, point.asOf ? NO_LIVE_USAGE : liveUsage, path.session_id, userId);
      },
    }),
    sessionCosts.get('/api/sessions/{session_id}/costs', {
      summary: 'The call page’s cost card: rows of provider, service, units and cost, and the total, as JSON numbers',
      response: sessionCostCardResponse,
      handle: async ({ path, userId }) => sessionCostCard(ch, liveUsage, budgets, path.session_id, userId),
    }),
  ];
}
