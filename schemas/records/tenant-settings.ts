import type { FromSchema } from 'json-schema-to-ts';

/**
 * A tenant's billing settings (PATCH /api/periods/{user_id}/settings): the IANA time zone its months
 * begin and end in. Set before the tenant's first close; the latest `updated_at` wins.
 */
export const tenantSettingsRecordSchema = {
  $id: 'callmeter/records/tenant-settings',
  type: 'object',
  additionalProperties: false,
  required: ['user_id', 'time_zone', 'updated_at'],
  properties: {
    user_id: { type: 'string', minLength: 1, maxLength: 512 },
    time_zone: { type: 'string', minLength: 1, maxLength: 64 },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export type TenantSettingsRecord = FromSchema<typeof tenantSettingsRecordSchema>;
