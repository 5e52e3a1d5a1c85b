import type { FromSchema } from 'json-schema-to-ts';

export const RECORD_KINDS = [
  'session',
  'telephony_number',
  'usage',
  'agent',
  'transcript',
  'rate',
  'api_key',
  'audit',
  'period',
  'tenant_settings',
  'budget',
  'webhook_endpoint',
] as const;

/**
 * Every record on the record path (a Kafka value, or a value of the embedded journal). The payload is
 * validated by the schema of its kind, on both sides.
 */
export const envelopeSchema = {
  $id: 'callmeter/records/envelope',
  type: 'object',
  additionalProperties: false,
  required: ['schema_version', 'id', 'kind', 'key', 'occurred_at', 'received_at', 'payload'],
  properties: {
    schema_version: { const: 1 },
    /** Unique per record; a resend of the same change carries the same id. */
    id: { type: 'string', format: 'uuid' },
    kind: { enum: RECORD_KINDS },
    /**
     * Partition key: all records of one session share it, so they stay in order. A kind's prefix and up to
     * two ids (a tenant's period key: `period:`, a 512-character user id, `:YYYY-MM`).
     */
    key: { type: 'string', minLength: 1, maxLength: 1_100 },
    occurred_at: { type: 'string', format: 'date-time' },
    received_at: { type: 'string', format: 'date-time' },
    payload: { type: 'object' },
  },
} as const;

export type Envelope = FromSchema<typeof envelopeSchema>;
export type RecordKind = Envelope['kind'];
