import type { ModelSchema } from '../../services/shared/validation/schema-dialect.ts';
import type { FromPySchema } from '../../services/shared/validation/schema-types.ts';
import { usageEventBody } from './usage-event.ts';

const name = { 'x-py': 'str', maxLength: 512 } as const;

/** GET /api/rates — every filter optional; `at` (default now) picks the entries in force then. */
export const ratesQuery = {
  type: 'object',
  properties: {
    provider: name,
    model: name,
    service: { 'x-py': 'literal', enum: ['stt', 'llm', 'tts'] },
    user_id: { ...name, description: "with it, that tenant's own entries too (they win over the others)" },
    at: { 'x-py': 'datetime', description: 'default now' },
  },
} as const satisfies ModelSchema;

export type RatesQuery = FromPySchema<typeof ratesQuery>;

/** POST /api/rates/quote — a usage event as a worker sends it, no session needed. */
export const rateQuoteBody = {
  ...usageEventBody,
  title: 'RateQuote',
  properties: { ...usageEventBody.properties, user_id: { ...usageEventBody.properties.user_id, description: "whose rates apply (a tenant's own entries win); default: none" } },
  required: ['provider', 'event_type'],
} as const satisfies ModelSchema;

export type RateQuoteBody = FromPySchema<typeof rateQuoteBody>;

const decimal = { type: 'string', pattern: '^\\d+(\\.\\d+)?$', description: 'exact decimal' } as const;
const nullableText = { type: ['string', 'null'] } as const;

export const rateEntrySchema = {
  type: 'object',
  required: ['id', 'scope', 'user_id', 'provider', 'model', 'service', 'event_type', 'dimension', 'unit', 'price', 'per', 'currency', 'effective_from', 'effective_to', 'source'],
  properties: {
    id: { type: 'string' },
    scope: { enum: ['card', 'catalog', 'tenant'] },
    user_id: nullableText,
    provider: { type: 'string' },
    model: nullableText,
    service: { type: 'string' },
    event_type: { type: 'string' },
    dimension: { type: 'string', description: 'quantity, or the token kind the price multiplies' },
    unit: { type: 'string' },
    price: decimal,
    per: decimal,
    currency: { type: 'string' },
    effective_from: { type: ['string', 'null'], format: 'date-time', description: 'null: since the catalog has known it' },
    effective_to: { type: ['string', 'null'], format: 'date-time' },
    source: { type: 'string' },
  },
} as const;

export const rateQuoteResponseSchema = {
  type: 'object',
  required: ['total_cost', 'currency', 'cost_source', 'components'],
  properties: {
    total_cost: decimal,
    currency: { type: 'string' },
    cost_source: { enum: ['computed', 'reported', 'unpriced'] },
    scope: { type: ['string', 'null'], enum: ['card', 'tenant', 'catalog', null] },
    quantity: decimal,
    components: {
      type: 'array',
      items: {
        type: 'object',
        required: ['dimension', 'quantity', 'unit', 'price', 'per', 'cost', 'rate_id'],
        properties: { dimension: { type: 'string' }, quantity: decimal, unit: { type: 'string' }, price: decimal, per: decimal, cost: decimal, rate_id: { type: 'string' } },
      },
    },
  },
} as const;
