import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_SECRET_PATTERN } from '../records/webhook-endpoint.ts';
import { arrayOf, closedObject, count, dateTime, nullable, oneOf, text, uuid } from './response-parts.ts';

/** POST /api/webhooks */
export const webhookCreateBody = {
  type: 'object',
  title: 'WebhookCreate',
  properties: {
    url: {
      'x-py': 'str',
      minLength: 1,
      maxLength: 2048,
      description: 'http or https; never a loopback, private or link-local address (docs/webhooks.md)',
    },
    events: {
      'x-py': 'list',
      items: { 'x-py': 'literal', enum: WEBHOOK_EVENT_TYPES },
      minItems: 1,
      maxItems: WEBHOOK_EVENT_TYPES.length,
      description: 'the event types delivered to it',
    },
    user_id: {
      'x-py': 'str',
      minLength: 1,
      maxLength: 512,
      description: 'receive this tenant’s events only; default: a bound admin’s own tenant, else every tenant',
    },
    description: { 'x-py': 'str', maxLength: 500 },
  },
  required: ['url', 'events'],
} as const satisfies ModelSchema;

export type WebhookCreateBody = FromPySchema<typeof webhookCreateBody>;

/** GET /api/webhooks/{webhook_id}/deliveries */
export const deliveriesQuery = {
  type: 'object',
  properties: {
    limit: { 'x-py': 'int', minimum: 1, maximum: 500, default: 50, description: 'messages, newest first' },
  },
} as const satisfies ModelSchema;

const secret = {
  type: 'string',
  pattern: WEBHOOK_SECRET_PATTERN,
  description: 'the signing secret: shown in this answer only',
} as const;

/** An endpoint as read: never a secret. */
export const webhookSchema = closedObject(
  {
    id: uuid,
    url: text,
    events: arrayOf(oneOf(WEBHOOK_EVENT_TYPES)),
    description: nullable(text),
    user_id: { ...nullable(text), description: 'null: every tenant’s events' },
    status: oneOf(['enabled', 'disabled']),
    created_at: dateTime,
    disabled_at: nullable(dateTime),
    disabled_reason: nullable(text),
  },
  { title: 'Webhook' },
);

export const webhookListSchema = arrayOf(webhookSchema);

/** The 201 of POST /api/webhooks: the endpoint and its secret, shown this once. */
export const webhookCreatedSchema = closedObject({ ...webhookSchema.properties, secret }, { title: 'WebhookCreated' });

/** The answer of POST /api/webhooks/{webhook_id}/rotate-secret. */
export const webhookRotatedSchema = closedObject(
  {
    id: uuid,
    secret,
    previous_secret_expires_at: {
      ...dateTime,
      description: 'until then every message is signed with both secrets',
    },
  },
  { title: 'WebhookSecretRotated' },
);

const attemptSchema = closedObject(
  {
    attempt: { ...count, description: 'counted from 1' },
    at: dateTime,
    status_code: { ...nullable({ type: 'integer' }), description: 'null: no answer (refused, timed out, unreachable)' },
    latency_ms: count,
    error: nullable(text),
    ok: { type: 'boolean', description: 'a 2xx answer' },
  },
  { title: 'WebhookAttempt' },
);

/** One message to one endpoint, with every attempt made. */
export const webhookDeliverySchema = closedObject(
  {
    message_id: { ...text, description: 'the `webhook-id` header: the same on every attempt' },
    type: oneOf(WEBHOOK_EVENT_TYPES),
    status: oneOf(['pending', 'delivered', 'failed']),
    created_at: dateTime,
    next_attempt_at: { ...nullable(dateTime), description: 'null once delivered or given up' },
    attempts: arrayOf(attemptSchema),
  },
  { title: 'WebhookDelivery' },
);

export const webhookDeliveryListSchema = arrayOf(webhookDeliverySchema);

/** The 202 of POST /api/webhooks/{webhook_id}/deliveries/{message_id}/redeliver. */
export const redeliverySchema = closedObject(
  { message_id: text, status: { const: 'pending' }, next_attempt_at: dateTime },
  { title: 'WebhookRedelivery' },
);
