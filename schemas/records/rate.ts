import type { FromSchema } from 'json-schema-to-ts';
import { TOKEN_KINDS } from '../pricing-terms.ts';

const decimal = { type: 'string', pattern: '^\\d+(\\.\\d+)?$' } as const;

/**
 * A tenant's own price (POST /api/rates), in the rate card's terms: it wins over the card's general
 * entries and the catalog for that user from `effective_from`, until `effective_to` (DELETE sets it to
 * the moment of the delete). Every change is a new version of the same id; the highest wins.
 */
export const rateRecordSchema = {
  $id: 'callmeter/records/rate',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'user_id',
    'provider',
    'model',
    'event_type',
    'service',
    'pricing',
    'unit',
    'price',
    'price_per',
    'currency',
    'effective_from',
    'effective_to',
    'created_at',
    'version',
  ],
  properties: {
    id: { type: 'string', pattern: '^[a-z0-9][a-z0-9._-]*$', maxLength: 128 },
    user_id: { type: 'string', minLength: 1, maxLength: 512 },
    provider: { type: 'string', minLength: 1, maxLength: 512 },
    model: { type: ['string', 'null'], maxLength: 512 },
    /** Exactly one of event_type and service is set. */
    event_type: { type: ['string', 'null'] },
    service: { type: ['string', 'null'] },
    pricing: { enum: ['quantity', ...TOKEN_KINDS] },
    unit: { type: 'string', minLength: 1 },
    price: decimal,
    price_per: decimal,
    currency: { type: 'string', pattern: '^[A-Z]{3}$' },
    effective_from: { type: 'string', format: 'date-time' },
    effective_to: { type: ['string', 'null'], format: 'date-time' },
    created_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export type RateRecord = FromSchema<typeof rateRecordSchema>;
