import type { FromSchema } from 'json-schema-to-ts';

/**
 * A tenant's billing period (a calendar month in UTC) as it was closed (POST
 * /api/periods/{user_id}/{period}/close): from `closed_at` on, nothing stored later lands in it (a late
 * row is an adjustment of a later month's statement). A change is a new version; the highest wins.
 */
export const periodRecordSchema = {
  $id: 'callmeter/records/period',
  type: 'object',
  additionalProperties: false,
  required: ['user_id', 'period', 'status', 'closed_at', 'version'],
  properties: {
    user_id: { type: 'string', minLength: 1, maxLength: 512 },
    period: { type: 'string', pattern: '^\\d{4}-(0[1-9]|1[0-2])$' },
    status: { enum: ['closed'] },
    closed_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export type PeriodRecord = FromSchema<typeof periodRecordSchema>;
