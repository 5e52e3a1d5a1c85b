import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';
import type { ResponseSchema } from './response-parts.ts';
import { arrayOf, closedObject, count, dateTime, decimalText, money, nullable, oneOf, text } from './response-parts.ts';
import { currency } from './cost-responses.ts';
import { asOf } from './query-params.ts';

/**
 * A billing period: a calendar month in the tenant's time zone (UTC unless set), `YYYY-MM`, of the years
 * 0002 to 9998, so that its bounds in every zone are date-times of the years 0001 to 9999 (January of the
 * year 1 begins, east of UTC, in the year 0; December of 9999 ends, west of it, in the year 10000).
 */
export const PERIOD_PATTERN = '^(?!000[01]|9999)\\d{4}-(0[1-9]|1[0-2])$';

/** POST /api/periods/{user_id}/{period}/close */
export const periodSchema = closedObject(
  {
    user_id: text,
    period: { ...text, description: 'YYYY-MM, a calendar month in the tenant’s time zone' },
    status: oneOf(['open', 'closed']),
    version: { ...count, description: 'the month’s closes, counted from 1' },
    closed_at: { ...dateTime, description: 'when this version closed the month' },
    reopened_at: { ...nullable(dateTime), description: 'when it was reopened; null while closed' },
  },
  { title: 'BillingPeriod' },
);

export const periodResponse = { schema: periodSchema } as const satisfies ResponseSchema;

/** PATCH /api/periods/{user_id}/settings */
export const periodSettingsBody = {
  type: 'object',
  title: 'PeriodSettings',
  properties: {
    time_zone: {
      'x-py': 'str',
      'x-py-check': 'time-zone',
      minLength: 1,
      maxLength: 64,
      description: 'IANA time zone the tenant’s months begin and end in',
    },
  },
  required: ['time_zone'],
} as const satisfies ModelSchema;

export type PeriodSettingsBody = FromPySchema<typeof periodSettingsBody>;

/** GET and PATCH /api/periods/{user_id}/settings */
export const periodSettingsSchema = closedObject(
  {
    user_id: text,
    time_zone: { ...text, description: 'IANA time zone of the tenant’s months; UTC until set' },
    updated_at: { ...nullable(dateTime), description: 'when it was set; null while never set' },
  },
  { title: 'PeriodSettingsAnswer' },
);

export const periodSettingsResponse = { schema: periodSettingsSchema } as const satisfies ResponseSchema;

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
    time_zone: { ...text, description: 'the IANA time zone the month begins and ends in' },
    period_start: { ...dateTime, description: 'the month’s first instant' },
    period_end: { ...dateTime, description: 'the first instant after the month' },
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
