import type { WireOf } from '../../../schemas/http/response-parts.ts';
import type { liveCostsStream } from '../../../schemas/http/session-cost-responses.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { CostTally, money } from '../cost-tally.ts';
import { activeSessions, sessionsServiceLines } from '../queries/session-costs.ts';

const CURRENCY = 'USD';

/** One message of GET /api/costs/live: the caller's calls in progress and what they have cost so far. */
export type LiveCosts = WireOf<typeof liveCostsStream.schema>;

/**
 * What the user's calls in progress (sessions ACTIVE now) have cost so far, per call and service, from
 * what is stored: two reads by the user's key (sessions_by_user, usage_by_session), summed exactly.
 * The total is the summary's `live_cost` at the same instant.
 */
export async function liveCosts(ch: ClickHouse, userId: string, nowMs: number): Promise<LiveCosts> {
  const sessions = await activeSessions(ch, userId);
  const lines = await sessionsServiceLines(
    ch,
    userId,
    sessions.map((session) => session.session_key),
  );
  const tallies = new Map(sessions.map((session) => [session.session_key, new CostTally()]));
  const total = new CostTally();
  for (const line of lines) {
    tallies.get(line.session_key)?.add(line);
    total.add(line);
  }
  return {
    as_of: new Date(nowMs).toISOString(),
    currency: CURRENCY,
    total_cost: money(total.totalCost),
    sessions: sessions.map((session) => {
      const tally = tallies.get(session.session_key)!;
      return {
        session_id: session.session_key,
        room_name: session.room_name,
        agent_id: session.agent_id,
        started_at: session.started_ms === null ? null : new Date(Number(session.started_ms)).toISOString(),
        status: 'ACTIVE',
        total_cost: money(tally.totalCost),
        event_count: tally.events,
        by_service: Object.fromEntries(
          tally
            .byService()
            .map(({ service, event_type, unit, quantity, cost }) => [service, { event_type, unit, quantity, cost }]),
        ),
      };
    }),
  };
}
