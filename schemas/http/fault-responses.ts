import type { ResponseSchema } from './response-parts.ts';
import { closedObject, money } from './response-parts.ts';

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
