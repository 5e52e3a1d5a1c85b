import type { FromSchema } from 'json-schema-to-ts';

/**
 * One version of a tenant's billing period (a calendar month in UTC): a close (POST
 * /api/periods/{user_id}/{period}/close) and, once the month is reopened, the end of that close
 * (`reopened_at`). While a close holds, nothing stored lands in the month (a late row is an adjustment
 * of a later month's statement). Each change is a new revision of the version; the highest wins.
 */
export const periodRecordSchema = {
  $id: 'callmeter/records/period',
  type: 'object',
  additionalProperties: false,
  required: ['user_id', 'period', 'version', 'closed_at', 'reopened_at', 'revision'],
  properties: {
    user_id: { type: 'string', minLength: 1, maxLength: 512 },
    period: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' },
    version: { type: 'integer', minimum: 1 },
    closed_at: { type: 'string', format: 'date-time' },
    reopened_at: { type: ['string', 'null'], format: 'date-time' },
    revision: { enum: [1, 2] },
  },
} as const;

export type PeriodRecord = FromSchema<typeof periodRecordSchema>;
