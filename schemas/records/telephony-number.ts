import type { FromSchema } from 'json-schema-to-ts';

/** The number an agent holds after an assign or a release; `version` grows with every change. */
export const telephonyNumberRecordSchema = {
  $id: 'callmeter/records/telephony_number',
  type: 'object',
  additionalProperties: false,
  required: ['agent_id', 'phone_number', 'provider', 'status', 'changed_at', 'version'],
  properties: {
    /** Keys the number's records: 1 to 512 characters, as every agent id. */
    agent_id: { type: 'string', minLength: 1, maxLength: 512 },
    phone_number: { type: ['string', 'null'] },
    provider: { type: ['string', 'null'] },
    status: { enum: ['assigned', 'released'] },
    changed_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export type TelephonyNumberRecord = FromSchema<typeof telephonyNumberRecordSchema>;
