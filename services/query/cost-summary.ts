import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { READ_AFRESH, type Answers } from './answer-cache.ts';
import { compareText, CostTally, money, ZERO } from './cost-tally.ts';
import { activeSessionsCostRead, sessionsWithUsageRead } from './queries/session-costs.ts';
import { readTogether } from './queries/together.ts';
import { summaryLinesRead, type SummaryLine } from './queries/usage-totals.ts';
import { partsByService, partsByServiceRead, serviceKey, type PartRow } from './queries/usage-parts.ts';
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

/**
 * The summary's four reads in one statement (a statement's own cost is most of a small read's). `withLive`
 * false (an as-of answer): live_cost is 0, since which calls were live then is not kept.
 */
async function summaryTotals(ch: ClickHouse, userId: string, monthStart: number, withLive: boolean) {
  const rows = await readTogether<{
    lines: SummaryLine;
    sessions: { session_total: string };
    live: { cost_sum: string };
    parts: PartRow;
  }>(ch, {
    lines: summaryLinesRead(ch, userId, monthStart),
    sessions: sessionsWithUsageRead(ch, userId),
    live: withLive ? activeSessionsCostRead(ch, userId) : { sql: `SELECT '0' AS cost_sum` },
    parts: partsByServiceRead(ch, userId),
  });
  // The tally sorts providers and services; the lines are sorted so that the currency is the first provider's.
  const lines = rows.lines.sort((a, b) => compareText(a.provider, b.provider) || compareText(a.service, b.service));
  const sessions = Number(rows.sessions[0]?.session_total ?? 0);
  const live = rows.live[0]?.cost_sum ?? '0';
  const parts = partsByService(rows.parts);
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
