/** GET /api/costs/unpriced: one entry per provider, model and event type with unpriced usage. */
export const unpricedUsageResponse = {
  type: 'array',
  items: {
    type: 'object',
    required: ['provider', 'model', 'event_type', 'unit', 'event_count', 'quantity', 'first_seen', 'last_seen'],
    properties: {
      provider: { type: 'string' },
      model: { type: ['string', 'null'] },
      event_type: { type: 'string' },
      unit: { type: 'string' },
      event_count: { type: 'integer' },
      quantity: { type: 'string', pattern: '^\\d+(\\.\\d+)?$', description: 'exact decimal, in the unit' },
      first_seen: { type: 'string', format: 'date-time' },
      last_seen: { type: 'string', format: 'date-time' },
    },
  },
} as const;
