import { USAGE_LIMITS } from '../../../schemas/records/usage.ts';
import type { ValidationItem } from '../../shared/errors.ts';
import { Exact } from '../../shared/exact-decimal.ts';

const MAX_REPORTED_COST = new Exact(USAGE_LIMITS.MAX_REPORTED_COST);

export interface ReportedCosts {
  readonly unit_cost?: string;
  readonly total_cost?: string;
}

/**
 * What the schema cannot bound field by field: when the consumer falls back to the reported figures
 * (no rate for the event, price-usage.ts), the cost is quantity × unit_cost without a total_cost,
 * and the stored unit cost is total_cost ÷ quantity without a unit_cost. Each must stay within
 * MAX_REPORTED_COST like the fields themselves, so that no event's cost or unit cost outgrows what
 * the columns and sums hold (10^12 × 10^6 was accepted once and wrapped every sum negative).
 */
export function reportedCostProblems(quantityText: string, { unit_cost, total_cost }: ReportedCosts): ValidationItem[] {
  const quantity = new Exact(quantityText);
  if (total_cost === undefined && unit_cost !== undefined) {
    const cost = quantity.times(unit_cost);
    if (cost.greaterThan(MAX_REPORTED_COST))
      return [
        problem(
          'unit_cost',
          `quantity × unit_cost is ${cost.toFixed()}, over the limit of ${MAX_REPORTED_COST.toFixed()} for one event`,
          unit_cost,
        ),
      ];
  }
  if (total_cost !== undefined && unit_cost === undefined && quantity.greaterThan(0)) {
    const perUnit = new Exact(total_cost).dividedBy(quantity);
    if (perUnit.greaterThan(MAX_REPORTED_COST)) {
      return [
        problem(
          'total_cost',
          `total_cost ÷ quantity is over the limit of ${MAX_REPORTED_COST.toFixed()} per unit; send unit_cost with it`,
          total_cost,
        ),
      ];
    }
  }
  return [];
}

function problem(field: string, message: string, input: string): ValidationItem {
  return { type: 'value_error', loc: ['body', field], msg: `Value error, ${message}`, input, ctx: { error: {} } };
}
