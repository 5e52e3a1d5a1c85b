import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';
import { BUDGET_ACTIONS, BUDGET_PERIODS, THRESHOLD_PATTERN } from '../records/budget.ts';
import { arrayOf, closedObject, dateTime, money, nullable, oneOf, text, uuid } from './response-parts.ts';

const name = { 'x-py': 'str', minLength: 1, maxLength: 200, description: 'what the budget is for' } as const;
const amount = {
  'x-py': 'decimal',
  exclusiveMinimum: 0,
  maximum: 1_000_000_000_000,
  description: 'in the card’s currency, at most 18 decimals: the spend per period, or per call for a cap',
} as const;
const thresholds = {
  'x-py': 'list',
  items: { 'x-py': 'str', pattern: THRESHOLD_PATTERN },
  minItems: 1,
  maxItems: 10,
  description:
    'percentages of the amount (`90%`) or amounts (`20.00`), each fired once per period (per call for a cap)',
} as const;
const action = {
  'x-py': 'literal',
  enum: BUDGET_ACTIONS,
  description: 'block: once spent, new calls of its scope are refused (402); notify: webhooks only',
} as const;
const filter = {
  'x-py': 'dict',
  description: 'only the usage of this `service`, `provider` and/or `model` counts',
} as const;

/** POST /api/budgets */
export const budgetCreateBody = {
  type: 'object',
  title: 'BudgetCreate',
  properties: {
    name,
    user_id: { 'x-py': 'str', minLength: 1, maxLength: 512, description: 'the tenant whose spend counts' },
    agent_id: { 'x-py': 'str', minLength: 1, maxLength: 512, description: 'one agent’s spend; default the tenant’s' },
    per_call: { 'x-py': 'bool', default: false, description: 'a cap on every single call, period `none`' },
    amount,
    period: {
      'x-py': 'literal',
      enum: BUDGET_PERIODS,
      description: 'calendar period in time_zone: default month, or none for a per-call cap',
    },
    time_zone: {
      'x-py': 'str',
      'x-py-check': 'time-zone',
      minLength: 1,
      maxLength: 64,
      default: 'UTC',
      description: 'IANA zone of the period’s days',
    },
    thresholds: { ...thresholds, default: ['100%'] },
    action: { ...action, default: 'notify' },
    filter,
  },
  required: ['name', 'user_id', 'amount'],
} as const satisfies ModelSchema;

export type BudgetCreateBody = FromPySchema<typeof budgetCreateBody>;

/** PATCH /api/budgets/{budget_id}: what changes; what is left out stays. */
export const budgetPatchBody = {
  type: 'object',
  title: 'BudgetPatch',
  properties: { name, amount, thresholds, action, filter },
} as const satisfies ModelSchema;

export type BudgetPatchBody = FromPySchema<typeof budgetPatchBody>;

/** GET /api/budgets */
export const budgetListQuery = {
  type: 'object',
  properties: {
    user_id: { 'x-py': 'str', minLength: 1, maxLength: 512, description: 'one tenant’s budgets' },
  },
} as const satisfies ModelSchema;

export type BudgetListQuery = FromPySchema<typeof budgetListQuery>;

export const budgetSchema = closedObject(
  {
    id: uuid,
    name: text,
    user_id: text,
    agent_id: nullable(text),
    per_call: { type: 'boolean' },
    amount: money,
    period: oneOf(BUDGET_PERIODS),
    time_zone: text,
    thresholds: arrayOf(text),
    action: oneOf(BUDGET_ACTIONS),
    filter: closedObject(
      { service: text, provider: text, model: text },
      { optional: ['service', 'provider', 'model'] },
    ),
    created_at: dateTime,
    updated_at: dateTime,
    spent: { ...nullable(money), description: 'this period’s spend so far; null for a per-call cap' },
    remaining: { ...nullable(money), description: 'amount less spent, at least 0; null for a per-call cap' },
    period_start: nullable(dateTime),
    period_end: nullable(dateTime),
    projected_exhaustion_at: {
      ...nullable(dateTime),
      description: 'when the spend reaches the amount at this period’s rate so far; null when not on course',
    },
  },
  { title: 'Budget' },
);

export const budgetListSchema = arrayOf(budgetSchema);

/** GET /api/sessions/{session_id}/budget */
export const sessionBudgetSchema = closedObject(
  {
    session_id: uuid,
    allowed: { type: 'boolean', description: 'false once a per-call cap or a blocking budget of its scope is spent' },
    spent: money,
    cap: { ...nullable(money), description: 'the lowest per-call cap that covers the call; null when none' },
    remaining: { ...nullable(money), description: 'cap less spent, at least 0; null without a cap' },
    budget_id: { ...nullable(uuid), description: 'the cap’s budget' },
  },
  { title: 'SessionBudget' },
);
