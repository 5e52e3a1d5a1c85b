import { expect } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { eventually } from '../support/harness.ts';
import { expectedTotals } from '../support/rollups.ts';
import type { CorrectionDriver } from './correction-driver.ts';
import type { DriverSession, LoadDriver, SentEvent } from './load-driver.ts';
import { phaseReport } from './phase-report.ts';

export interface StoredCheck {
  /** Where the cost views are read. */
  readonly url: string;
  readonly user: string;
  readonly sessions: readonly DriverSession[];
  /** Stopped: every event it sent has its final answer. */
  readonly driver: LoadDriver;
  /** What every table fed by usage_events holds (`/_faults/stored-totals`). */
  readonly totals: () => Promise<unknown>;
  /** More to print beside a session whose breakdown differs. */
  readonly diagnose?: (sessionId: string, listed: readonly { id: string }[]) => Promise<object>;
  /** Stopped: the voids and amends made of the load's events, each with its answer. */
  readonly corrections?: CorrectionDriver;
}

/**
 * After a load under faults: every acknowledged event is stored exactly once and no refused one at
 * all, in every table usage_events feeds, in each session's breakdown, and in the summary, timeline and
 * by-agent views, each equal to the Decimal sum of the acknowledged events' known costs. Prints the
 * per-phase table (sent, acknowledged, stored, lost, duplicated). With `corrections`, each corrected
 * event counts at its corrected cost (a voided one not at all), and its rows are its correction's once:
 * a void's reversal, an amend's reversal and replacement.
 */
export async function expectStoredExactlyOnce({
  url,
  user,
  sessions,
  driver,
  totals,
  diagnose,
  corrections,
}: StoredCheck) {
  const events = [...driver.events.values()];
  process.stdout.write(`retried requests: ${JSON.stringify(Object.fromEntries(driver.retries))}\n`);
  const acknowledged = events.filter((event) => event.acknowledged);
  expect(events.filter((event) => !event.acknowledged && !event.refused)).toEqual([]);
  expect(events.filter((event) => event.invalid !== event.refused)).toEqual([]);
  const made = corrections?.made ?? new Map<string, never>();
  if (corrections !== undefined) {
    process.stdout.write(`retried corrections: ${JSON.stringify(Object.fromEntries(corrections.retries))}\n`);
    expect([...made.entries()].filter(([, correction]) => !correction.settled)).toEqual([]);
  }
  const costOf = (event: SentEvent) => made.get(event.id)?.cost ?? event.cost;
  const counts = (event: SentEvent) => made.get(event.id)?.kind !== 'void';
  const costSum = (list: readonly SentEvent[]) => list.reduce((sum, event) => sum.plus(costOf(event)), new Exact(0));
  const counted = acknowledged.filter(counts);
  const expectedTotal = costSum(acknowledged);
  const voids = [...made.values()].filter((correction) => correction.kind === 'void').length;
  const rowIds = acknowledged.length + voids + 2 * (made.size - voids);

  const get = async <T>(route: string) => (await call<T>(url, 'GET', route, undefined, { 'x-user-id': user })).body;
  // Not drained in time is not the end of the check: the per-phase table below says where the
  // missing events were born, and the per-event check names them.
  await eventually(
    async () =>
      expect(await get<{ event_count: number; total_cost: string }>('/api/costs/summary')).toMatchObject({
        event_count: counted.length,
        total_cost: expectedTotal.toFixed(),
      }),
    180_000,
    500,
  ).catch((error: unknown) =>
    process.stdout.write(`the summary did not reach the acknowledged events within 180 s: ${String(error)}\n`),
  );
  await new Promise((resolve) => setTimeout(resolve, 3_000));

  const stored = new Map<string, number>();
  /** Each corrected event's correction rows, by their weight. */
  const correctionRows = new Map<string, number[]>();
  let sessionTotals = new Exact(0);
  const sessionMismatches: unknown[] = [];
  for (const [index, session] of sessions.entries()) {
    const breakdown = await get<{
      total_cost: string;
      event_count: number;
      events: { id: string; weight: number; correction: { event_id: string } | null }[];
      events_truncated: boolean;
    }>(`/api/sessions/${session.id}/cost-breakdown`);
    expect(breakdown.events_truncated).toBe(false);
    sessionTotals = sessionTotals.plus(breakdown.total_cost);
    for (const { id, weight, correction } of breakdown.events) {
      if (correction === null) stored.set(id, (stored.get(id) ?? 0) + 1);
      else correctionRows.set(correction.event_id, [...(correctionRows.get(correction.event_id) ?? []), weight]);
    }
    const own = acknowledged.filter((event) => event.session === index);
    const expected = { total_cost: costSum(own).toFixed(), event_count: own.filter(counts).length };
    const got = { total_cost: new Exact(breakdown.total_cost).toFixed(), event_count: breakdown.event_count };
    if (got.total_cost !== expected.total_cost || got.event_count !== expected.event_count) {
      sessionMismatches.push({
        session: session.id,
        expected,
        got,
        listed: breakdown.events.length,
        ...(diagnose === undefined ? {} : await diagnose(session.id, breakdown.events)),
      });
    }
  }
  if (sessionMismatches.length > 0)
    process.stdout.write(`sessions whose breakdown differs: ${JSON.stringify(sessionMismatches)}\n`);
  process.stdout.write(`\n${phaseReport(events, stored, 'fault')}\n`);

  // Every table fed by usage_events, not only the ones the cost views read: a replay counted twice
  // in one rollup, or an id missing from usage_event_ids_by_user (the exactly-once lookup), shows here.
  const tableTotals = await totals();
  process.stdout.write(`stored totals: ${JSON.stringify(tableTotals)}\n`);
  const missing = events.filter((event) => (stored.get(event.id) ?? 0) !== (event.acknowledged ? 1 : 0));
  if (missing.length > 0)
    process.stdout.write(
      `events stored other than acknowledged: ${JSON.stringify(missing.slice(0, 20).map((e) => ({ id: e.id, phase: e.phase, acknowledged: e.acknowledged, stored: stored.get(e.id) ?? 0 })))}\n`,
    );
  expect(tableTotals).toEqual(expectedTotals(counted.length, expectedTotal.toFixed(), rowIds));
  for (const [eventId, correction] of made)
    expect(correctionRows.get(eventId)?.sort(), `${correction.kind} of ${eventId}`).toEqual(
      correction.kind === 'void' ? [-1] : [-1, 1],
    );
  expect([...correctionRows.keys()].filter((eventId) => !made.has(eventId))).toEqual([]);
  for (const event of events)
    expect(stored.get(event.id) ?? 0, `${event.phase}: ${event.id} acknowledged=${event.acknowledged}`).toBe(
      event.acknowledged ? 1 : 0,
    );
  const summary = await get<{ total_cost: string; event_count: number; session_count: number }>('/api/costs/summary');
  // A session counts once it has a stored row, a voided event's included: each is marked once whatever the replays.
  expect(summary).toMatchObject({
    total_cost: expectedTotal.toFixed(),
    event_count: counted.length,
    session_count: new Set(acknowledged.map((event) => event.session)).size,
  });
  const timeline = await get<{ total_cost: string }[]>('/api/costs/timeline?period=daily');
  expect(timeline.reduce((sum, point) => sum.plus(point.total_cost), new Exact(0)).toFixed()).toBe(
    expectedTotal.toFixed(),
  );
  const agents = await get<{ agent_id: string; total_cost: string; session_count: number }[]>('/api/costs/by-agent');
  // Over all time, each agent's sessions with a stored row.
  const agentSessions = new Map<string, Set<number>>();
  for (const event of acknowledged) {
    const agent = sessions[event.session]!.agent_id;
    if (agent !== null) agentSessions.set(agent, (agentSessions.get(agent) ?? new Set()).add(event.session));
  }
  expect(Object.fromEntries(agents.map((agent) => [agent.agent_id, agent.session_count]))).toEqual(
    Object.fromEntries([...agentSessions].map(([agent, counted]) => [agent, counted.size])),
  );
  const withoutAgent = costSum(acknowledged.filter((event) => sessions[event.session]!.agent_id === null));
  expect(agents.reduce((sum, agent) => sum.plus(agent.total_cost), withoutAgent).toFixed()).toBe(
    expectedTotal.toFixed(),
  );
  expect(sessionMismatches).toEqual([]);
  expect(sessionTotals.toFixed()).toBe(expectedTotal.toFixed());
}

export function sumOf(events: readonly SentEvent[]): Exact {
  return events.reduce((sum, event) => sum.plus(event.cost), new Exact(0));
}
