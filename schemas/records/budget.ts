import type { FromSchema } from 'json-schema-to-ts';

export const BUDGET_PERIODS = ['day', 'week', 'month', 'none'] as const;
export const BUDGET_ACTIONS = ['notify', 'block'] as const;

/** A threshold: a percentage of the amount (`90%`) or an amount of money (`20.00`). */
export const THRESHOLD_PATTERN = '^(\\d{1,4}(\\.\\d{1,4})?%|\\d{1,12}(\\.\\d{1,18})?)$';

/**
 * The whole state of a budget after a change (POST, PATCH, DELETE /api/budgets; docs/budgets.md):
 * `version` grows by one with every change and the highest wins. Money is exact decimal text.
 */
export const budgetRecordSchema = {
  $id: 'callmeter/records/budget',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'name',
    'user_id',
    'agent_id',
    'per_call',
    'amount',
    'period',
    'time_zone',
    'thresholds',
    'action',
    'filter',
    'created_at',
    'updated_at',
    'deleted_at',
    'version',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    name: { type: 'string', minLength: 1, maxLength: 200 },
    user_id: { type: 'string', minLength: 1, maxLength: 512 },
    /** One agent's spend; null: the tenant's. */
    agent_id: { type: ['string', 'null'], minLength: 1, maxLength: 512 },
    /** A cap on every single call of the tenant (or agent), period `none`. */
    per_call: { type: 'boolean' },
    amount: { type: 'string', pattern: '^\\d{1,20}(\\.\\d{1,18})?$' },
    period: { enum: BUDGET_PERIODS },
    time_zone: { type: 'string', minLength: 1, maxLength: 64 },
    thresholds: { type: 'array', minItems: 1, maxItems: 10, items: { type: 'string', pattern: THRESHOLD_PATTERN } },
    action: { enum: BUDGET_ACTIONS },
    filter: {
      type: 'object',
      additionalProperties: false,
      properties: {
        service: { type: 'string', minLength: 1, maxLength: 32 },
        provider: { type: 'string', minLength: 1, maxLength: 128 },
        model: { type: 'string', minLength: 1, maxLength: 256 },
      },
    },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
    deleted_at: { type: ['string', 'null'], format: 'date-time' },
    version: { type: 'integer', minimum: 1 },
  },
} as const;

export type BudgetRecord = FromSchema<typeof budgetRecordSchema>;
export type BudgetPeriod = (typeof BUDGET_PERIODS)[number];
