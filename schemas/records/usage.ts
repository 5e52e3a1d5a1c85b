import type { FromSchema } from 'json-schema-to-ts';

/**
 * The bounds that keep every stored value and every sum exact (docs/usage-events.md, Limits): ingest refuses a
 * usage event past them with a 422, and the rate card loader refuses a rate past them, so no event
 * the consumer prices can cost more than MAX_EVENT_COST.
 * - MAX_QUANTITY: one event's quantity, and each token count, in the event type's unit.
 * - MAX_REPORTED_COST: a reported total_cost or unit_cost, and quantity × unit_cost when that is the cost.
 * - MAX_RATE_PER_UNIT: a rate card's price ÷ price_per.
 * - MAX_EVENT_COST: MAX_QUANTITY × MAX_RATE_PER_UNIT, above MAX_REPORTED_COST: the most one event costs.
 * Every one fits the Decimal(38, 18) of usage_events (under 1.7 × 10^20) with room to spare.
 */
export const USAGE_LIMITS = {
  MAX_QUANTITY: 1_000_000_000_000,
  MAX_REPORTED_COST: 1_000_000,
  MAX_RATE_PER_UNIT: 1_000,
  MAX_EVENT_COST: 1_000_000_000_000_000,
} as const;

const decimal = { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } as const;
const nullableDecimal = { type: ['string', 'null'], pattern: '^\\d+(\\.\\d+)?$' } as const;

/** A row's price as stored (usage_events' columns): a reversal negates it, a repricing stores it as given. */
const storedPriceSchema = {
  type: 'object',
  additionalProperties: false,
  required: [
    'service',
    'quantity',
    'unit',
    'unit_cost',
    'cost',
    'cost_source',
    'rate_id',
    'currency',
    'price_scope',
    'components',
  ],
  properties: {
    service: { type: 'string' },
    quantity: decimal,
    unit: { type: 'string' },
    unit_cost: decimal,
    cost: decimal,
    cost_source: { enum: ['computed', 'reported', 'unpriced'] },
    rate_id: { type: 'string' },
    currency: { type: 'string' },
    price_scope: { type: 'string' },
    components: {
      type: 'array',
      items: {
        type: 'object',
        additionalProperties: false,
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

/**
 * One usage event as ingest accepted it, before pricing: the consumer applies the rate card.
 * `event_id` is the idempotency key (the client's, else made at ingest): however often the same
 * event_id arrives, it is counted once. Quantities and costs are exact decimal strings.
 */
export const usageRecordSchema = {
  $id: 'callmeter/records/usage',
  type: 'object',
  additionalProperties: false,
  required: [
    'event_id',
    'session_id',
    'user_id',
    'agent_id',
    'provider',
    'event_type',
    'model',
    'quantity',
    'input_tokens',
    'output_tokens',
    'reported_unit_cost',
    'reported_total_cost',
    'occurred_at',
    'received_at',
  ],
  properties: {
    event_id: { type: 'string', format: 'uuid' },
    session_id: { type: 'string', format: 'uuid' },
    user_id: { type: 'string' },
    agent_id: { type: ['string', 'null'] },
    /** As sent, lower-cased: an alias only chooses the rate, never renames the provider. */
    provider: { type: 'string', minLength: 1 },
    event_type: { type: 'string', minLength: 1 },
    model: { type: ['string', 'null'] },
    /** In the event type's unit: minutes, tokens or characters. */
    quantity: decimal,
    input_tokens: nullableDecimal,
    output_tokens: nullableDecimal,
    // The parts of input and output (token-kinds.ts); optional, as records written before them lack them.
    cached_input_tokens: nullableDecimal,
    cache_write_tokens: nullableDecimal,
    audio_input_tokens: nullableDecimal,
    cached_audio_input_tokens: nullableDecimal,
    image_input_tokens: nullableDecimal,
    cached_image_input_tokens: nullableDecimal,
    audio_output_tokens: nullableDecimal,
    reasoning_tokens: nullableDecimal,
    /** A realtime model's connected seconds (llm_tokens only); optional, as records written before it lack it. */
    session_duration_seconds: nullableDecimal,
    reported_unit_cost: nullableDecimal,
    reported_total_cost: nullableDecimal,
    occurred_at: { type: 'string', format: 'date-time' },
    received_at: { type: 'string', format: 'date-time' },
    /**
     * Set on the rows of a correction (docs/corrections.md): the record then stands for a reversal of
     * an earlier row, stored with that row's price negated (`reversed`), or for a replacement: an amend's,
     * priced as any event at the original's instant, or a repricing's, stored at the `price` ingest gave
     * it. `event_id` is the row's own id.
     */
    correction: {
      type: 'object',
      additionalProperties: false,
      required: ['id', 'kind', 'of', 'reason', 'created_at'],
      properties: {
        id: { type: 'string', format: 'uuid' },
        kind: { enum: ['void', 'amend', 'reprice'] },
        /** The event as sent that is corrected. */
        of: { type: 'string', format: 'uuid' },
        reason: { type: 'string' },
        created_at: { type: 'string', format: 'date-time' },
        /** On a reversal: the row it negates, and that row's price as stored. */
        reverses: { type: 'string', format: 'uuid' },
        reversed: storedPriceSchema,
        /** On a repricing's replacement: the price to store it at, as ingest priced it. */
        price: storedPriceSchema,
      },
    },
  },
} as const;

export type UsageRecord = FromSchema<typeof usageRecordSchema>;
