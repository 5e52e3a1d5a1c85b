import type { FromSchema } from 'json-schema-to-ts';

/**
 * The whole state of an agent after a change; `version` grows by one with every change. The number
 * it holds is not here: that is the telephony_number record's.
 */
export const agentRecordSchema = {
  $id: 'callmeter/records/agent',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'name',
    'description',
    'type',
    'config',
    'is_active',
    'user_id',
    'created_at',
    'updated_at',
    'version',
  ],
  properties: {
    id: { type: 'string', minLength: 1, maxLength: 512 },
    name: { type: 'string' },
    description: { type: ['string', 'null'] },
    type: { enum: ['STT', 'LLM', 'TTS', 'PIPELINE'] },
    config: { type: 'object' },
    is_active: { type: 'boolean' },
    user_id: { type: 'string' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export type AgentRecord = FromSchema<typeof agentRecordSchema>;
