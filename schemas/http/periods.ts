import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';
import type { ResponseSchema } from './response-parts.ts';
import { arrayOf, closedObject, count, dateTime, decimalText, money, nullable, oneOf, text } from './response-parts.ts';
import { currency } from './cost-responses.ts';
import { asOf } from './query-params.ts';

/** A billing period: a calendar month in UTC, `YYYY-MM`. */
export const PERIOD_PATTERN = '^\\d{4}-(0[1-9]|1[0-2])$';

/** POST /api/periods/{user_id}/{period}/close */
export const periodSchema = closedObject(
  {
    user_id: text,
    period: { ...text, description: 'YYYY-MM, a calendar month in UTC' },
    status: oneOf(['open', 'closed']),
    version: { ...count, description: 'the month’s closes, counted from 1' },
    closed_at: { ...dateTime, description: 'when this version closed the month' },
    reopened_at: { ...nullable(dateTime), description: 'when it was reopened; null while closed' },
  },
  { title: 'BillingPeriod' },
);

export const periodResponse = { schema: periodSchema } as const satisfies ResponseSchema;

/** GET /api/statements/{user_id}/{period} */
export const statementQuery = {
  type: 'object',
  properties: {
    by_agent: { 'x-py': 'bool', default: false, description: 'a line per agent too' },
    format: { 'x-py': 'literal', enum: ['json', 'csv'], description: 'csv: the lines as CSV' },
    version: {
      'x-py': 'int',
      minimum: 1,
      maximum: 1_000_000,
      description: 'a closed version: the statement as that close made it (default: as it stands now)',
    },
    as_of: asOf,
  },
} as const satisfies ModelSchema;

export type StatementQuery = FromPySchema<typeof statementQuery>;

const statementLineSchema = closedObject(
  {
    kind: {
      ...oneOf(['usage', 'adjustment']),
      description: 'adjustment: a row of a closed month stored after its close',
    },
    service: text,
    provider: text,
    model: nullable(text),
    unit: text,
    quantity: { ...decimalText, pattern: '^-?\\d+(\\.\\d+)?$' },
    unit_price: { ...money, description: 'per unit, as the rows were priced' },
    cost: { ...money, pattern: '^-?\\d+(\\.\\d+)?$' },
    agent_id: { ...nullable(text), description: 'with by_agent only' },
    period: { ...text, description: 'the month the usage occurred in (an adjustment’s is earlier)' },
  },
  { optional: ['agent_id'], title: 'StatementLine' },
);

export const statementSchema = closedObject(
  {
    user_id: text,
    period: text,
    status: oneOf(['open', 'closed']),
    version: { ...count, description: '0 while the month was never closed' },
    closed_at: nullable(dateTime),
    currency,
    total_cost: { ...money, pattern: '^-?\\d+(\\.\\d+)?$' },
    lines: arrayOf(statementLineSchema),
  },
  { title: 'Statement' },
);

export const statementResponse = {
  schema: statementSchema,
  alternatives: ['text/csv'],
} as const satisfies ResponseSchema;
