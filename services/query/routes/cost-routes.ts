import { costByAgentQuery, costSummaryQuery, costTimelineQuery } from '../../../schemas/http/query-params.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import type { LiveUsageStore } from '../../shared/redis/live-usage.ts';
import { costBreakdown } from '../cost-breakdown.ts';
import { costByAgent } from '../cost-by-agent.ts';
import { costSummary } from '../cost-summary.ts';
import { costTimeline } from '../cost-timeline.ts';
import { sessionCostCard } from '../session-cost-card.ts';
import { agentsCsv, timelineCsv, wantsCsv } from '../csv.ts';
import type { Period } from '../timeline-buckets.ts';
import { dateRangeOf } from './date-bounds.ts';
import { timeZoneOf } from './time-zone.ts';

const TAGS = ['costs'];
const CURRENCY = 'USD';
const money = { type: 'string', pattern: '^\\d+(\\.\\d+)?$', description: 'exact decimal' } as const;
const moneyMap = { type: 'object', additionalProperties: money } as const;

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
      response: { schema: { type: 'object', required: ['total_cost', 'this_month_cost', 'by_provider'], properties: { total_cost: money, this_month_cost: money, by_provider: moneyMap } }, example: { total_cost: '0.048468', this_month_cost: '0.048468', by_provider: { deepgram: '0.02695' } } },
      handle: async ({ query, userId }) => costSummary(ch, userId!, timeZoneOf(query.tz), now()),
    }),
    defineRoute({
      method: 'GET', path: '/api/costs/timeline', summary: 'The caller’s cost per day, week (from Monday) or month of a zone, every bucket of the range', tags: TAGS,
      request: { query: costTimelineQuery }, requireUserId: true,
      response: {
        schema: { type: 'array', items: { type: 'object', required: ['date', 'total_cost', 'by_provider'], properties: { date: { type: 'string', format: 'date' }, total_cost: money, by_provider: moneyMap } } },
        example: [{ date: '2026-11-22', total_cost: '0.048468', by_provider: { deepgram: '0.02695' } }],
        alternatives: ['text/csv'],
      },
      handle: async ({ query, userId }, ctx) => {
        const timeZone = timeZoneOf(query.tz);
        const points = await costTimeline(ch, userId!, dateRangeOf(query, timeZone), query.period as Period, timeZone, now());
        return wantsCsv(query.format, ctx.get('accept')) ? timelineCsv(points, CURRENCY) : points;
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/costs/by-agent', summary: 'The caller’s cost per agent, most expensive first', tags: TAGS,
      request: { query: costByAgentQuery }, requireUserId: true,
      response: {
        schema: { type: 'array', items: { type: 'object', required: ['agent_id', 'agent_name', 'total_cost', 'session_count', 'event_count'], properties: { agent_id: { type: 'string' }, agent_name: { type: 'string' }, total_cost: money, session_count: { type: 'integer' }, event_count: { type: 'integer' } } } },
        example: [{ agent_id: 'agent-1', agent_name: 'Front desk', total_cost: '0.048468', session_count: 3, event_count: 12 }],
        alternatives: ['text/csv'],
      },
      handle: async ({ query, userId }, ctx) => {
        const agents = await costByAgent(ch, userId!, dateRangeOf(query, timeZoneOf(query.tz)), query.limit);
        return wantsCsv(query.format, ctx.get('accept')) ? agentsCsv(agents, CURRENCY) : agents;
      },
    }),
    defineRoute({
      method: 'GET', path: '/api/sessions/{session_id}/cost-breakdown', summary: 'What one call cost: its events, per type and per provider and service', tags: TAGS,
      request: { path: { type: 'object', properties: { session_id: { 'x-py': 'str' } }, required: ['session_id'] } },
      responses: { 404: { description: 'Unknown session (or, with x-user-id, another user’s)', example: { detail: 'Session not found' } } },
      response: {
        schema: { type: 'object', required: ['session_id', 'total_cost', 'events', 'cost_by_type'], properties: { session_id: { type: 'string' }, total_cost: money, events: { type: 'array' }, cost_by_type: moneyMap } },
        example: { session_id: '6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10', total_cost: '0.02695', events: [], cost_by_type: { stt_minutes: '0.02695' } },
      },
      handle: async ({ path }, ctx) => costBreakdown(ch, liveUsage, path.session_id, ctx.get('x-user-id') || null),
    }),
    defineRoute({
      method: 'GET', path: '/api/sessions/{session_id}/costs', summary: 'The call page’s cost card: rows of provider, service, units and cost, and the total, as JSON numbers', tags: TAGS,
      request: { path: { type: 'object', properties: { session_id: { 'x-py': 'str' } }, required: ['session_id'] } },
      responses: { 404: { description: 'Unknown session (or, with x-user-id, another user’s)', example: { detail: 'Session not found' } } },
      response: {
        schema: {
          type: 'object', required: ['session_id', 'total_cost', 'breakdown'],
          properties: {
            session_id: { type: 'string' }, total_cost: { type: 'number' }, total_cost_exact: money,
            breakdown: { type: 'array', items: { type: 'object', required: ['provider', 'service', 'units', 'unit_label', 'cost'], properties: { provider: { type: 'string' }, service: { type: 'string' }, units: { type: 'number' }, unit_label: { type: 'string' }, cost: { type: 'number' }, units_exact: money, cost_exact: money } } },
          },
        },
        example: { session_id: '6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10', total_cost: 0.02695, breakdown: [{ provider: 'deepgram', service: 'stt', units: 6.5, unit_label: 'minutes', cost: 0.02695 }] },
      },
      handle: async ({ path }, ctx) => sessionCostCard(ch, liveUsage, path.session_id, ctx.get('x-user-id') || null),
    }),
  ];
}
