import type { ResponseSchema } from '../../services/shared/http/define-route.ts';

/**
 * JSON Schemas of the query service's cost answers, with an example each, for the OpenAPI document.
 * Money is an exact decimal string, but in the call page's cost card, whose numbers the old dashboard
 * reads (with `*_exact` beside).
 */
const money = { type: 'string', pattern: '^\\d+(\\.\\d+)?$', description: 'exact decimal' } as const;
const moneyMap = { type: 'object', additionalProperties: money } as const;

/** GET /api/costs/summary */
const costSummaryResponseSchema = {
  type: 'object',
  required: ['total_cost', 'this_month_cost', 'by_provider'],
  properties: { total_cost: money, this_month_cost: money, by_provider: moneyMap },
} as const;

/** GET /api/costs/timeline: every bucket of the range. */
const costTimelineResponseSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['date', 'total_cost', 'by_provider'],
    properties: { date: { type: 'string', format: 'date' }, total_cost: money, by_provider: moneyMap },
  },
} as const;

/** GET /api/costs/by-agent */
const costByAgentResponseSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['agent_id', 'agent_name', 'total_cost', 'session_count', 'event_count'],
    properties: {
      agent_id: { type: 'string' },
      agent_name: { type: 'string' },
      total_cost: money,
      session_count: { type: 'integer' },
      event_count: { type: 'integer' },
    },
  },
} as const;

/** GET /api/sessions/{session_id}/cost-breakdown */
const costBreakdownResponseSchema = {
  type: 'object',
  required: ['session_id', 'total_cost', 'events', 'cost_by_type'],
  properties: { session_id: { type: 'string' }, total_cost: money, events: { type: 'array' }, cost_by_type: moneyMap },
} as const;

/** GET /api/sessions/{session_id}/costs: the call page's cost card. */
const sessionCostCardResponseSchema = {
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

const SESSION_ID = '6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10';
const CSV = ['text/csv'];

export const costSummaryResponse: ResponseSchema = {
  schema: costSummaryResponseSchema,
  example: { total_cost: '0.048468', this_month_cost: '0.048468', by_provider: { deepgram: '0.02695' } },
};

export const costTimelineResponse: ResponseSchema = {
  schema: costTimelineResponseSchema,
  example: [{ date: '2026-11-22', total_cost: '0.048468', by_provider: { deepgram: '0.02695' } }],
  alternatives: CSV,
};

export const costByAgentResponse: ResponseSchema = {
  schema: costByAgentResponseSchema,
  example: [
    { agent_id: 'agent-1', agent_name: 'Front desk', total_cost: '0.048468', session_count: 3, event_count: 12 },
  ],
  alternatives: CSV,
};

export const costBreakdownResponse: ResponseSchema = {
  schema: costBreakdownResponseSchema,
  example: { session_id: SESSION_ID, total_cost: '0.02695', events: [], cost_by_type: { stt_minutes: '0.02695' } },
};

export const sessionCostCardResponse: ResponseSchema = {
  schema: sessionCostCardResponseSchema,
  example: {
    session_id: SESSION_ID,
    total_cost: 0.02695,
    breakdown: [{ provider: 'deepgram', service: 'stt', units: 6.5, unit_label: 'minutes', cost: 0.02695 }],
  },
};
