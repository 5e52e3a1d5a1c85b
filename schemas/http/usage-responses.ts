import { COST_SOURCES } from '../pricing-terms.ts';
import type { ResponseSchema } from './response-parts.ts';
import { eventType } from './cost-responses.ts';
import { validationItemSchema } from './error-responses.ts';
import { arrayOf, closedObject, dateTime, decimalText, money, nullable, oneOf, text, uuid } from './response-parts.ts';

const costSource = oneOf(COST_SOURCES);

/**
 * POST /api/usage/events: compat.md's usage-event keys, then callmeter's. unit_cost and total_cost are
 * the sender's own when sent, else as priced at acceptance; `cost` and `cost_source` are callmeter's
 * price (absent when it could not be priced at acceptance: the consumer prices it).
 */
const acceptedUsageSchema = closedObject(
  {
    id: uuid,
    session_id: uuid,
    user_id: text,
    agent_id: nullable(text),
    provider: { ...text, description: 'as sent, lower-cased' },
    event_type: eventType,
    quantity: decimalText,
    unit_cost: { ...nullable(money), description: 'an LLM’s per 1,000 tokens' },
    total_cost: nullable(money),
    created_at: dateTime,
    occurred_at: dateTime,
    model: nullable(text),
    input_tokens: nullable(decimalText),
    output_tokens: nullable(decimalText),
    cost: money,
    cost_source: costSource,
  },
  { optional: ['cost', 'cost_source'], title: 'UsageEvent' },
);

/** POST /api/usage/events/batch: one result per item, in the order sent. */
const batchResultSchema = closedObject(
  {
    index: { type: 'integer', minimum: 0 },
    id: { ...nullable(uuid), description: 'null for a rejected item' },
    status: oneOf(['accepted', 'duplicate', 'rejected']),
    errors: { ...arrayOf(validationItemSchema), description: 'why a rejected item was refused' },
    cost: money,
    cost_source: costSource,
  },
  { optional: ['errors', 'cost', 'cost_source'], title: 'UsageBatchResult' },
);

export const acceptedUsageResponse = { schema: acceptedUsageSchema } as const satisfies ResponseSchema;

export const usageBatchResponse = {
  schema: arrayOf(batchResultSchema),
  example: [
    {
      index: 0,
      id: '0d9f6a3e-8c1b-4b7e-9f2a-5e6d7c8b9a01',
      status: 'accepted',
      cost: '0.02695',
      cost_source: 'computed',
    },
    {
      index: 1,
      id: null,
      status: 'rejected',
      errors: [
        {
          type: 'missing',
          loc: ['body', 1, 'provider'],
          msg: 'Field required',
          input: { session_id: '6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10' },
        },
      ],
    },
  ],
} as const satisfies ResponseSchema;
