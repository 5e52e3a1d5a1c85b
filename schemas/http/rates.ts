import type { ModelSchema } from '../../services/shared/validation/schema-dialect.ts';
import { TOKEN_KINDS } from '../../services/shared/pricing/token-kinds.ts';
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
  properties: {
    ...usageEventBody.properties,
    user_id: {
      ...usageEventBody.properties.user_id,
      description: "whose rates apply (a tenant's own entries win); default: none",
    },
  },
  required: ['provider', 'event_type'],
} as const satisfies ModelSchema;

export type RateQuoteBody = FromPySchema<typeof rateQuoteBody>;

const decimal = { type: 'string', pattern: '^\\d+(\\.\\d+)?$', description: 'exact decimal' } as const;
const nullableText = { type: ['string', 'null'] } as const;

export const rateEntrySchema = {
  type: 'object',
  required: [
    'id',
    'scope',
    'user_id',
    'provider',
    'model',
    'service',
    'event_type',
    'dimension',
    'unit',
    'price',
    'per',
    'currency',
    'effective_from',
    'effective_to',
    'source',
  ],
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
    effective_from: {
      type: ['string', 'null'],
      format: 'date-time',
      description: 'null: since the catalog has known it',
    },
    effective_to: { type: ['string', 'null'], format: 'date-time' },
    source: { type: 'string' },
  },
} as const;

/** GET /api/rates */
export const rateEntryListSchema = { type: 'array', items: rateEntrySchema } as const;

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
        properties: {
          dimension: { type: 'string' },
          quantity: decimal,
          unit: { type: 'string' },
          price: decimal,
          per: decimal,
          cost: decimal,
          rate_id: { type: 'string' },
        },
      },
    },
  },
} as const;

/** POST /api/rates — a tenant's own price; it wins over the card's general entries and the catalog for that user. */
export const rateCreateBody = {
  type: 'object',
  title: 'RateCreate',
  properties: {
    user_id: { ...name, minLength: 1 },
    provider: { ...name, minLength: 1 },
    model: name,
    event_type: {
      'x-py': 'enum',
      enum: ['stt_minutes', 'llm_tokens', 'tts_characters'],
      description: 'this or service',
    },
    service: {
      'x-py': 'literal',
      enum: ['stt', 'llm', 'tts'],
      description: 'every event type of the service; this or event_type',
    },
    dimension: {
      'x-py': 'literal',
      enum: ['quantity', ...TOKEN_KINDS],
      default: 'quantity',
      description: 'what the price multiplies: the quantity, or one token kind',
    },
    price: {
      'x-py': 'decimal',
      minimum: 0,
      maximum: 1_000_000_000,
      description: 'for `per` units, at most 18 decimals',
    },
    per: {
      'x-py': 'decimal',
      minimum: 0,
      maximum: 1_000_000_000,
      description: 'default 1 (write per-1K and per-1M prices as published)',
    },
    currency: {
      'x-py': 'str',
      pattern: '^[A-Z]{3}$',
      description: "the rate card's currency (USD), the default; another is a 422: costs are never converted",
    },
    effective_from: {
      'x-py': 'datetime',
      description: 'default now; earlier than now is refused: history is never repriced',
    },
    effective_to: { 'x-py': 'datetime', description: 'default: until DELETE' },
  },
  required: ['user_id', 'provider', 'price'],
} as const satisfies ModelSchema;

export type RateCreateBody = FromPySchema<typeof rateCreateBody>;
