import type { ResponseSchema } from './response-parts.ts';
import { closedObject, count, money } from './response-parts.ts';

/** The answers of the fault-injection routes (FAULT_INJECTION=1 only). */

export const faultOnResponse = {
  schema: closedObject({
    status: { const: 'failing' },
    seconds: { type: 'integer', minimum: 1, description: 'how long the fault lasts' },
  }),
} as const satisfies ResponseSchema;

/** Event count and cost sum by table name (usage_event_ids has no cost). */
export const storedTotalsResponse = {
  schema: {
    type: 'object',
    additionalProperties: closedObject(
      { n: { type: 'string', pattern: '^\\d+$', description: 'a count, exact' }, cost: money },
      { optional: ['cost'] },
    ),
  },
} as const satisfies ResponseSchema;

/** The answer of POST /_faults/webhook-events: what the webhooks' emit function answered. */
export const webhookEmittedResponse = {
  schema: closedObject({
    message_id: { type: 'string', description: 'the webhook-id every attempt carries' },
    endpoints: { ...count, description: 'the endpoints it was queued for' },
    duplicate: { type: 'boolean', description: 'the idempotency key was emitted before: nothing queued' },
  }),
} as const satisfies ResponseSchema;
