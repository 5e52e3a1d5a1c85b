import type { Budgets } from '../domain/budgets/index.ts';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import { breakdownOf, findSession } from './cost-breakdown.ts';
import { capStanding, capsOfCall } from './live/call-cap.ts';

type Breakdown = Awaited<ReturnType<typeof breakdownOf>>;

/**
 * GET /api/sessions/{session_id}/costs: the call page's cost card (the old dashboard's SessionCosts),
 * one row per provider, service and unit and the total, from the same breakdown as /cost-breakdown,
 * live usage included. The card calls toFixed on units, cost and total_cost, so those are JSON
 * numbers; each has its exact decimal string beside it (`*_exact`), and /cost-breakdown keeps them all.
 * `budget` is the call against its lowest per-call cap, as its cost stream sends it: a list of calls
 * learns which are over their cap from the cards it reads anyway, not from a request per call more.
 */
export async function sessionCostCard(
  ch: ClickHouse,
  liveUsage: LiveUsageStore,
  budgets: Pick<Budgets, 'all'>,
  sessionId: string,
  callerId: string | null,
) {
  const session = await findSession(ch, sessionId, callerId);
  const breakdown = await breakdownOf(ch, liveUsage, session);
  return { ...toCostCard(breakdown), budget: capStanding(capsOfCall(budgets, session), breakdown) };
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
