import type { FromSchema } from 'json-schema-to-ts';

/** What a webhook endpoint may subscribe to: the events budgets, caps and pricing emit (docs/webhooks.md). */
export const WEBHOOK_EVENT_TYPES = [
  'budget.threshold_crossed',
  'budget.exhausted',
  'budget.resolved',
  'call.cap_reached',
  'usage.unpriced',
] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

/** `whsec_` and the base64 of 32 random bytes (Standard Webhooks' secret format). */
export const WEBHOOK_SECRET_PATTERN = '^whsec_[A-Za-z0-9+/]{43}=$';

/**
 * The whole state of a webhook endpoint after a change (POST /api/webhooks, a rotation, a delete, the
 * delivery's disabling); `version` grows by one with every change and the highest wins. The signing
 * secrets are kept as they are, not hashed: a signature is an HMAC made with the secret itself.
 */
export const webhookEndpointRecordSchema = {
  $id: 'callmeter/records/webhook-endpoint',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'user_id',
    'url',
    'events',
    'description',
    'secrets',
    'created_at',
    'disabled_at',
    'disabled_reason',
    'deleted_at',
    'version',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    /** The one tenant whose events it receives; null: every tenant's (an unbound admin's endpoint). */
    user_id: { type: ['string', 'null'], minLength: 1, maxLength: 512 },
    url: { type: 'string', minLength: 1, maxLength: 2048 },
    events: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: WEBHOOK_EVENT_TYPES } },
    description: { type: ['string', 'null'], maxLength: 500 },
    /** The current secret first; during a rotation the previous one with the instant it stops signing. */
    secrets: {
      type: 'array',
      minItems: 1,
      maxItems: 2,
      items: {
        type: 'object',
        additionalProperties: false,
        required: ['secret', 'expires_at'],
        properties: {
          secret: { type: 'string', pattern: WEBHOOK_SECRET_PATTERN },
          expires_at: { type: ['string', 'null'], format: 'date-time' },
        },
      },
    },
    created_at: { type: 'string', format: 'date-time' },
    /** Set when every attempt failed for days (docs/webhooks.md): nothing is delivered to it after. */
    disabled_at: { type: ['string', 'null'], format: 'date-time' },
    disabled_reason: { type: ['string', 'null'], maxLength: 500 },
    deleted_at: { type: ['string', 'null'], format: 'date-time' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export type WebhookEndpointRecord = FromSchema<typeof webhookEndpointRecordSchema>;
