import { COST_DIMENSIONS } from '../pricing-terms.ts';
import type { ResponseSchema } from './response-parts.ts';
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
} from './response-parts.ts';
import { USAGE_EVENT_TYPES } from './usage-event.ts';

/** One priced part of an event at its exact rate: cost = quantity × price ÷ per. */
export const costComponentSchema = closedObject(
  {
    dimension: oneOf(COST_DIMENSIONS),
    quantity: decimalText,
    unit: text,
    price: money,
    per: decimalText,
    cost: money,
    rate_id: text,
  },
  { title: 'CostComponent' },
);

/** A priced part of one stored row: negated on a correction's reversal. */
export const storedComponentSchema = closedObject(
  {
    ...costComponentSchema.properties,
    quantity: signedDecimalText,
    cost: signedMoney,
  },
  { title: 'StoredCostComponent' },
);

/**
 * JSON Schemas of the caller's cost answers (summary, timeline, by agent, unpriced usage), with an
 * example each, for the OpenAPI document and the handlers' types. Money is an exact decimal string;
 * `service`, `unit` and `currency` are the rate card's, so any string.
 */

export const eventType = oneOf(USAGE_EVENT_TYPES);
const service = { ...text, description: 'the rate card’s service of the event type (stt, llm, tts)' } as const;
const unit = { ...text, description: 'the rate card’s unit of the event type (minute, token, character)' } as const;
export const currency = { ...text, description: 'ISO 4217, the rate card’s (USD)' } as const;

/** One priced part summed: a token kind, or the quantity (`pending`: usage of a live call not stored yet). */
export const partTotalSchema = closedObject(
  { dimension: oneOf([...COST_DIMENSIONS, 'pending']), unit, quantity: decimalText, cost: money },
  { title: 'CostPart' },
);

/** The cost of one event type of a service, summed. */
export const serviceCostSchema = closedObject(
  { event_type: eventType, service, unit, quantity: decimalText, cost: money },
  { title: 'ServiceCost' },
);

const costSummarySchema = closedObject(
  {
    total_cost: money,
    this_month_cost: { ...money, description: 'since the 1st, 00:00 in tz' },
    by_provider: moneyMap,
    currency,
    by_service: arrayOf(
      closedObject(
        { ...serviceCostSchema.properties, parts: arrayOf(partTotalSchema) },
        { title: 'ServiceCostWithParts' },
      ),
    ),
    event_count: count,
    session_count: count,
    unpriced_event_count: count,
    reported_total_cost: { ...money, description: 'of the events whose cost is the sender’s own' },
    live_cost: { ...money, description: 'of the calls in progress so far' },
    as_of: dateTime,
  },
  { title: 'CostSummary' },
);

const timelinePointSchema = closedObject(
  {
    date: { type: 'string', format: 'date', description: 'the first day of the bucket, in tz' },
    total_cost: money,
    by_provider: moneyMap,
    by_service: arrayOf(serviceCostSchema),
    event_count: count,
  },
  { title: 'TimelinePoint' },
);

const agentCostSchema = closedObject(
  {
    agent_id: text,
    agent_name: { ...text, description: 'the agent’s own name, else its sessions’, else Unknown' },
    total_cost: money,
    session_count: count,
    event_count: count,
    by_service: arrayOf(serviceCostSchema),
  },
  { title: 'AgentCost' },
);

const unpricedUsageSchema = closedObject(
  {
    provider: text,
    model: nullable(text),
    event_type: eventType,
    unit,
    event_count: count,
    quantity: decimalText,
    first_seen: dateTime,
    last_seen: dateTime,
  },
  { title: 'UnpricedUsage' },
);

const CSV = ['text/csv'] as const;
const STT = { event_type: 'stt_minutes', service: 'stt', unit: 'minute', quantity: '3.5', cost: '0.02695' } as const;

/** GET /api/costs/summary */
export const costSummaryResponse = {
  schema: costSummarySchema,
  example: {
    total_cost: '0.02695',
    this_month_cost: '0.02695',
    by_provider: { deepgram: '0.02695' },
    currency: 'USD',
    by_service: [{ ...STT, parts: [{ dimension: 'quantity', unit: 'minute', quantity: '3.5', cost: '0.02695' }] }],
    event_count: 2,
    session_count: 1,
    unpriced_event_count: 0,
    reported_total_cost: '0',
    live_cost: '0',
    as_of: '2026-11-22T10:00:00.000Z',
  },
} as const satisfies ResponseSchema;

/** GET /api/costs/timeline: every bucket of the range. */
export const costTimelineResponse = {
  schema: arrayOf(timelinePointSchema),
  example: [
    {
      date: '2026-11-22',
      total_cost: '0.02695',
      by_provider: { deepgram: '0.02695' },
      by_service: [STT],
      event_count: 2,
    },
  ],
  alternatives: CSV,
} as const satisfies ResponseSchema;

/** GET /api/costs/by-agent */
export const costByAgentResponse = {
  schema: arrayOf(agentCostSchema),
  example: [
    {
      agent_id: 'agent-1',
      agent_name: 'Front desk',
      total_cost: '0.02695',
      session_count: 1,
      event_count: 2,
      by_service: [STT],
    },
  ],
  alternatives: CSV,
} as const satisfies ResponseSchema;

/** GET /api/costs/unpriced: one entry per provider, model and event type with unpriced usage. */
export const unpricedUsageResponse = {
  schema: arrayOf(unpricedUsageSchema),
  example: [
    {
      provider: 'acme-tts',
      model: 'v2',
      event_type: 'tts_characters',
      unit: 'character',
      event_count: 12,
      quantity: '5400',
      first_seen: '2026-11-24T09:00:00.000Z',
      last_seen: '2026-11-24T10:15:00.000Z',
    },
  ],
} as const satisfies ResponseSchema;
