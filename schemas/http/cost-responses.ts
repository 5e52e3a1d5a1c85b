/**
 * JSON Schemas of the query service's cost answers, for the OpenAPI document. Money is an exact decimal
 * string, but in the call page's cost card, whose numbers the old dashboard reads (with `*_exact` beside).
 */
const money = { type: 'string', pattern: '^\\d+(\\.\\d+)?$', description: 'exact decimal' } as const;
const moneyMap = { type: 'object', additionalProperties: money } as const;

/** GET /api/costs/summary */
export const costSummaryResponseSchema = {
  type: 'object',
  required: ['total_cost', 'this_month_cost', 'by_provider'],
  properties: { total_cost: money, this_month_cost: money, by_provider: moneyMap },
} as const;

/** GET /api/costs/timeline: every bucket of the range. */
export const costTimelineResponseSchema = {
  type: 'array',
  items: { type: 'object', required: ['date', 'total_cost', 'by_provider'], properties: { date: { type: 'string', format: 'date' }, total_cost: money, by_provider: moneyMap } },
} as const;

/** GET /api/costs/by-agent */
export const costByAgentResponseSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['agent_id', 'agent_name', 'total_cost', 'session_count', 'event_count'],
    properties: { agent_id: { type: 'string' }, agent_name: { type: 'string' }, total_cost: money, session_count: { type: 'integer' }, event_count: { type: 'integer' } },
  },
} as const;

/** GET /api/sessions/{session_id}/cost-breakdown */
export const costBreakdownResponseSchema = {
  type: 'object',
  required: ['session_id', 'total_cost', 'events', 'cost_by_type'],
  properties: { session_id: { type: 'string' }, total_cost: money, events: { type: 'array' }, cost_by_type: moneyMap },
} as const;

/** GET /api/sessions/{session_id}/costs: the call page's cost card. */
export const sessionCostCardResponseSchema = {
  type: 'object',
  required: ['session_id', 'total_cost', 'breakdown'],
  properties: {
    session_id: { type: 'string' },
    total_cost: { type: 'number' },
    total_cost_exact: money,
    breakdown: {
      type: 'array',
      items: {
        type: 'object',
        required: ['provider', 'service', 'units', 'unit_label', 'cost'],
        properties: {
          provider: { type: 'string' },
          service: { type: 'string' },
          units: { type: 'number' },
          unit_label: { type: 'string' },
          cost: { type: 'number' },
          units_exact: money,
          cost_exact: money,
        },
      },
    },
  },
} as const;
