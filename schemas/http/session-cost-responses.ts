import { COST_SOURCES } from '../pricing-terms.ts';
import type { ResponseSchema } from './response-parts.ts';
import { SESSION_STATUSES } from '../records/session.ts';
import { currency, eventType, partTotalSchema, storedComponentSchema } from './cost-responses.ts';
import {
  arrayOf,
  closedObject,
  count,
  dateTime,
  decimalText,
  money,
  moneyMap,
  nullable,
  oneOf,
  signedDecimalText,
  signedMoney,
  text,
  uuid,
} from './response-parts.ts';
import { CORRECTION_KINDS } from './usage-corrections.ts';

/**
 * JSON Schemas of one call's cost answers: the breakdown (also each message of its live stream), the
 * call page's cost card, and the live stream of the caller's calls in progress.
 */

/** The correction a stored row belongs to (docs/corrections.md). */
const correctionSchema = closedObject(
  {
    id: uuid,
    kind: oneOf(CORRECTION_KINDS),
    event_id: { ...uuid, description: 'the event corrected, as it was sent' },
    reverses: { ...nullable(uuid), description: 'on a reversal, the row it negates' },
    reason: text,
    created_at: dateTime,
  },
  { title: 'UsageCorrectionRef' },
);

/**
 * A stored row in compat.md's usage-event shape, priced (an LLM's unit_cost per 1,000 tokens): an event
 * as sent, or a row of its correction (a reversal's quantity and costs are negative).
 */
const breakdownEventSchema = closedObject(
  {
    id: uuid,
    session_id: uuid,
    user_id: text,
    agent_id: nullable(text),
    provider: text,
    event_type: eventType,
    quantity: signedDecimalText,
    unit_cost: money,
    total_cost: signedMoney,
    created_at: dateTime,
    occurred_at: dateTime,
    model: nullable(text),
    input_tokens: nullable(count),
    output_tokens: nullable(count),
    service: text,
    unit: text,
    cost_source: oneOf(COST_SOURCES),
    reported_unit_cost: nullable(money),
    reported_total_cost: nullable(signedMoney),
    components: arrayOf(storedComponentSchema),
    weight: { type: 'integer', enum: [1, -1], description: '-1 on a correction’s reversal, which negates a row' },
    correction: {
      ...nullable(correctionSchema),
      description: 'null for usage as sent; else the correction this row belongs to',
    },
  },
  { title: 'PricedUsageEvent' },
);

/** One row of the call page's table: a provider and service, summed. */
const breakdownItemSchema = closedObject(
  {
    provider: text,
    service: text,
    event_type: eventType,
    quantity: decimalText,
    unit: text,
    cost: money,
    parts: arrayOf(partTotalSchema),
  },
  { title: 'CostBreakdownItem' },
);

const BREAKDOWN_FIELDS = {
  session_id: uuid,
  total_cost: money,
  events: { ...arrayOf(breakdownEventSchema), description: 'oldest first, at most 10,000 (events_truncated)' },
  cost_by_type: moneyMap,
  currency,
  live: { type: 'boolean', description: 'the call is in progress (ACTIVE)' },
  event_count: count,
  events_truncated: { type: 'boolean' },
  items: arrayOf(breakdownItemSchema),
} as const;

const costBreakdownSchema = closedObject(BREAKDOWN_FIELDS, { title: 'CostBreakdown' });

/** The message of GET /api/sessions/{session_id}/cost-stream: the breakdown and the session's status. */
const capStandingSchema = closedObject(
  {
    allowed: { type: 'boolean', description: 'false once the call’s spend reached the cap' },
    spent: money,
    cap: money,
    remaining: money,
    budget_id: uuid,
  },
  { title: 'CapStanding' },
);

const capStandingField = {
  ...nullable(capStandingSchema),
  description:
    'the call against its lowest per-call cap, live usage included (docs/budgets.md#caps); null without a cap',
} as const;

const costStreamMessageSchema = closedObject(
  { ...BREAKDOWN_FIELDS, status: oneOf(SESSION_STATUSES), budget: capStandingField },
  { title: 'CostStreamMessage' },
);

// The old dashboard calls toFixed on units, cost and total_cost: JSON numbers, each with its exact string beside it.
const sessionCostCardSchema = closedObject(
  {
    session_id: uuid,
    total_cost: { type: 'number', description: 'for display only: total_cost_exact is the amount' },
    breakdown: arrayOf(
      closedObject(
        {
          provider: text,
          service: text,
          units: { type: 'number' },
          unit_label: text,
          cost: { type: 'number' },
          event_type: eventType,
          units_exact: decimalText,
          cost_exact: money,
        },
        { title: 'SessionCostRow' },
      ),
    ),
    total_cost_exact: money,
    currency,
    live: { type: 'boolean' },
    budget: capStandingField,
  },
  { title: 'SessionCostCard' },
);

/** The message of GET /api/costs/live: the caller's calls in progress and what each has cost so far. */
const liveCostsSchema = closedObject(
  {
    as_of: dateTime,
    currency,
    total_cost: { ...money, description: 'the summary’s live_cost at as_of' },
    sessions: arrayOf(
      closedObject(
        {
          session_id: uuid,
          room_name: text,
          agent_id: nullable(text),
          started_at: nullable(dateTime),
          status: { const: 'ACTIVE' },
          total_cost: money,
          event_count: count,
          by_service: {
            type: 'object',
            description: 'by service (stt, llm, tts)',
            additionalProperties: closedObject({
              event_type: eventType,
              unit: text,
              quantity: decimalText,
              cost: money,
            }),
          },
        },
        { title: 'LiveSessionCost' },
      ),
    ),
  },
  { title: 'LiveCosts' },
);

const SESSION_ID = '6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10';
const STT_PART = { dimension: 'quantity', unit: 'minute', quantity: '3.5', cost: '0.02695' } as const;

/** GET /api/sessions/{session_id}/cost-breakdown */
export const costBreakdownResponse = {
  schema: costBreakdownSchema,
  example: {
    session_id: SESSION_ID,
    total_cost: '0.02695',
    events: [],
    cost_by_type: { stt_minutes: '0.02695' },
    currency: 'USD',
    live: false,
    event_count: 1,
    events_truncated: false,
    items: [
      {
        provider: 'deepgram',
        service: 'stt',
        event_type: 'stt_minutes',
        quantity: '3.5',
        unit: 'minute',
        cost: '0.02695',
        parts: [STT_PART],
      },
    ],
  },
} as const satisfies ResponseSchema;

/** GET /api/sessions/{session_id}/costs: the call page's cost card. */
export const sessionCostCardResponse = {
  schema: sessionCostCardSchema,
  example: {
    session_id: SESSION_ID,
    total_cost: 0.02695,
    breakdown: [
      {
        provider: 'deepgram',
        service: 'stt',
        units: 3.5,
        unit_label: 'minute',
        cost: 0.02695,
        event_type: 'stt_minutes',
        units_exact: '3.5',
        cost_exact: '0.02695',
      },
    ],
    total_cost_exact: '0.02695',
    currency: 'USD',
    live: false,
    budget: null,
  },
} as const satisfies ResponseSchema;

/** GET /api/costs/live: `live` messages. */
export const liveCostsStream = { schema: liveCostsSchema, events: ['live'] } as const satisfies ResponseSchema;

/**
 * GET /api/sessions/{session_id}/cost-stream: `breakdown` messages, once a `cap_reached` (the first state
 * past the call's per-call cap), then one `end` once the call ended.
 */
export const costStream = {
  schema: costStreamMessageSchema,
  events: ['breakdown', 'cap_reached', 'end'],
} as const satisfies ResponseSchema;
