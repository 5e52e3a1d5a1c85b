import type { ModelSchema } from '../dialect/schema-dialect.ts';
import { TOKEN_KINDS } from '../pricing-terms.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';
import { COST_DIMENSIONS, COST_SOURCES, PRICE_SCOPES } from '../pricing-terms.ts';
import { arrayOf, closedObject, count, dateTime, decimalText, money, nullable, oneOf, text } from './response-parts.ts';
import { costComponentSchema } from './cost-responses.ts';
import { USAGE_EVENT_TYPES, usageEventBody } from './usage-event.ts';

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

const nullableText = { type: ['string', 'null'] } as const;

/** One price: `price` is for `per` units of `unit`, of `dimension`. */
export const rateEntrySchema = closedObject(
  {
    id: text,
    scope: oneOf(PRICE_SCOPES),
    user_id: nullableText,
    provider: text,
    model: nullableText,
    service: text,
    event_type: { ...text, description: 'an event type of the rate card' },
    dimension: { ...oneOf(COST_DIMENSIONS), description: 'quantity, or the token kind the price multiplies' },
    unit: text,
    price: money,
    per: decimalText,
    currency: text,
    effective_from: { ...nullable(dateTime), description: 'null: since the catalog has known it' },
    effective_to: nullable(dateTime),
    source: text,
  },
  { title: 'RateEntry' },
);

/** GET /api/rates */
export const rateEntryListSchema = arrayOf(rateEntrySchema);

export const rateQuoteResponseSchema = closedObject(
  {
    total_cost: money,
    currency: text,
    cost_source: oneOf(COST_SOURCES),
    scope: { ...nullable(oneOf(PRICE_SCOPES)), description: 'where the price came from; null unless computed' },
    quantity: decimalText,
    components: arrayOf(costComponentSchema),
  },
  { title: 'PriceQuote' },
);

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
      enum: USAGE_EVENT_TYPES,
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
      description:
        'default now; at most USAGE_MAX_AGE_DAYS back: it prices new usage of those instants, and stored usage once repriced (POST /api/rates/reprice)',
    },
    effective_to: { 'x-py': 'datetime', description: 'default: until DELETE' },
  },
  required: ['user_id', 'provider', 'price'],
} as const satisfies ModelSchema;

export type RateCreateBody = FromPySchema<typeof rateCreateBody>;

/** POST /api/rates/reprice — which stored events to price again, at the rates in force at their instant. */
export const rateRepriceBody = {
  type: 'object',
  title: 'RateReprice',
  properties: {
    user_id: { ...name, minLength: 1, description: "one tenant's events; default: every tenant's (an unbound admin)" },
    provider: { ...name, description: 'as stored (lower-cased)' },
    model: name,
    event_type: { 'x-py': 'enum', enum: USAGE_EVENT_TYPES },
    from: { 'x-py': 'datetime', description: 'the events that occurred at or after it' },
    to: { 'x-py': 'datetime', description: 'and before it: at most 31 days after from' },
    dry_run: { 'x-py': 'bool', default: false, description: 'answer what would change and record nothing' },
  },
  required: ['from', 'to'],
} as const satisfies ModelSchema;

export type RateRepriceBody = FromPySchema<typeof rateRepriceBody>;

export const rateRepriceResponseSchema = closedObject(
  {
    dry_run: { type: 'boolean' },
    events: { ...count, description: 'the events repriced (or that would be)' },
    old_total: { ...money, description: 'what those events cost before' },
    new_total: { ...money, description: 'what they cost repriced' },
  },
  { title: 'RepriceResult' },
);
