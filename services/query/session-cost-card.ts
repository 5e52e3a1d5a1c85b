import type { ClickHouse } from '../shared/clickhouse/client.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import { costBreakdown } from './cost-breakdown.ts';

type Breakdown = Awaited<ReturnType<typeof costBreakdown>>;

/**
 * GET /api/sessions/{session_id}/costs: the call page's cost card (the old dashboard's SessionCosts),
 * one row per provider, service and unit and the total, from the same breakdown as /cost-breakdown,
 * live usage included. The card calls toFixed on units, cost and total_cost, so those are JSON
 * numbers; each has its exact decimal string beside it (`*_exact`), and /cost-breakdown keeps them all.
 */
export async function sessionCostCard(
  ch: ClickHouse,
  liveUsage: LiveUsageStore,
  sessionId: string,
  callerId: string | null,
) {
  return toCostCard(await costBreakdown(ch, liveUsage, sessionId, callerId));
}

export function toCostCard(breakdown: Pick<Breakdown, 'session_id' | 'total_cost' | 'currency' | 'live' | 'items'>) {
  return {
    session_id: breakdown.session_id,
    total_cost: Number(breakdown.total_cost),
    breakdown: breakdown.items.map((item) => ({
      provider: item.provider,
      service: item.service,
      units: Number(item.quantity),
      unit_label: item.unit,
      cost: Number(item.cost),
      event_type: item.event_type,
      units_exact: item.quantity,
      cost_exact: item.cost,
    })),
    total_cost_exact: breakdown.total_cost,
    currency: breakdown.currency,
    live: breakdown.live,
  };
}
