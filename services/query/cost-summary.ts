import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { READ_AFRESH, type Answers } from './answer-cache.ts';
import { CostTally, money, ZERO } from './cost-tally.ts';
import { liveCost } from './live-cost.ts';
import { sessionsWithUsage } from './queries/session-costs.ts';
import { summaryLines } from './queries/usage-totals.ts';
import { partsByService, serviceKey } from './queries/usage-parts.ts';
import { localDate, startOfLocalDay, startOfMonth } from '../shared/zoned-time.ts';

/**
 * GET /api/costs/summary: compat.md's three keys first, then the breakdowns and counts. The answer
 * depends on "now" through the start of the month only (and `as_of`, stamped on each answer).
 */
export async function costSummary(
  ch: ClickHouse,
  userId: string,
  timeZone: string,
  nowMs: number,
  answers: Answers = READ_AFRESH,
  { live = true }: { readonly live?: boolean } = {},
) {
  const monthStart = startOfLocalDay(startOfMonth(localDate(nowMs, timeZone)), timeZone);
  const totals = await answers.answer(userId, JSON.stringify(['summary', monthStart]), () =>
    summaryTotals(ch, userId, monthStart, live),
  );
  return { ...totals, as_of: new Date(nowMs).toISOString() };
}

/** `withLive` false (an as-of answer): live_cost is 0, since which calls were live then is not kept. */
async function summaryTotals(ch: ClickHouse, userId: string, monthStart: number, withLive: boolean) {
  const [lines, sessions, live, parts] = await Promise.all([
    summaryLines(ch, userId, monthStart),
    sessionsWithUsage(ch, userId),
    withLive ? liveCost(ch, userId) : ZERO,
    partsByService(ch, userId),
  ]);
  const tally = new CostTally();
  let month = ZERO,
    reported = ZERO,
    unpriced = 0;
  for (const line of lines) {
    tally.add(line);
    month = month.plus(line.month_cost);
    reported = reported.plus(line.reported);
    unpriced += Number(line.unpriced);
  }
  return {
    total_cost: money(tally.totalCost),
    this_month_cost: money(month),
    by_provider: tally.byProvider(),
    currency: lines[0]?.currency ?? 'USD',
    // Each service with the parts of its computed cost (a token kind, or the quantity), as stored.
    by_service: tally
      .byService()
      .map((service) => ({ ...service, parts: parts.get(serviceKey(service.event_type, service.service)) ?? [] })),
    event_count: tally.events,
    session_count: sessions,
    unpriced_event_count: unpriced,
    reported_total_cost: money(reported),
    live_cost: money(live),
  };
}
