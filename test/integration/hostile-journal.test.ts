import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TABLES } from '../../services/shared/clickhouse/tables.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { makeUsageEventBody } from '../support/bodies.ts';
import { CostLedger, expectViewsExact, openLedgerSession } from '../support/cost-ledger.ts';
import { eventually } from '../support/harness.ts';
import { hostileModes, type Running } from '../support/hostile-modes.ts';
import { USAGE_ROLLUPS, type StoredTotals } from '../../services/consumer/stored-totals.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';

// The operator's faults of the storage beside a steady tenant: a materialized view that refuses its
// insert while usage_events and the other views take it (a full disk, a refused part), the embedded
// journal refusing its writes as a full disk does, and a writer that cannot store while requests wait
// for it. Every rollup ends equal to usage_events, /readyz says so within 5 s, and no request waits
// past the documented 10 s.

const FAULTS = { FAULT_INJECTION: '1' };
// The fault routes are on the process with the consumer and its engine (the query process apart).
const [EMBEDDED, APART] = hostileModes('hostile-journal', { embedded: FAULTS, query: FAULTS });
const MODES = [
  { ...EMBEDDED, journal: true },
  { ...APART, journal: false },
] as const;

// resemble: 0.00004 a character; every case event is 25 characters.
const EVENT_COST = new Exact('0.00004').times(25);
/** The documented longest wait of a request for the journal's writer (docs/architecture.md, the embedded journal). */
const JOURNAL_WAIT_MS = 10_000;

describe.each(MODES)('a failing view and a refusing journal beside a steady tenant, on $name', (mode) => {
  let running: Running;
  let steady: SteadyTenant;
  const ledger = new CostLedger();
  const sessions: Record<string, string> = {};
  /** When the journal refused writes: the steady tenant's 503s inside it are the fault's clear answer. */
  const refusals: { from: number; to: number }[] = [];
  const settle = <T>(check: () => Promise<T>) => eventually(check, 45_000, 250);
  const admin = (path: string) => call(running.query.url, 'POST', path);

  const openSession = (user: string) => openLedgerSession(running.ingest.url, ledger, user);

  /** Posts `count` events of 25 characters for the user's session, each counted once answered 201. */
  async function sendEvents(user: string, count: number) {
    const statuses: number[] = [];
    for (let i = 0; i < count; i += 1) {
      const body = makeUsageEventBody(sessions[user]!, { user_id: user, quantity: 25 });
      const answer = await call(running.ingest.url, 'POST', '/api/usage/events', body);
      statuses.push(answer.status);
      if (answer.status === 201) ledger.accept(sessions[user]!, body.event_id as string, EVENT_COST);
    }
    return statuses;
  }

  /** Every rollup and the event-id table hold what usage_events holds (of one tenant): no view lost or doubled a round. */
  async function expectRollupsEqualEvents(user?: string) {
    const path = `/_faults/stored-totals${user === undefined ? '' : `?user_id=${user}`}`;
    await settle(async () => {
      const totals = (await call<StoredTotals>(running.query.url, 'GET', path)).body;
      const events = totals.usage_events!;
      const rollups = Object.fromEntries(USAGE_ROLLUPS.map((table) => [TABLES[table], totals[TABLES[table]]]));
      expect(rollups).toEqual(Object.fromEntries(USAGE_ROLLUPS.map((table) => [TABLES[table], events])));
      expect(totals[TABLES.usageEventIds]).toEqual({ n: events.n });
    });
  }

  beforeAll(async () => {
    running = await mode.start();
    for (const user of ['tenant-views', 'tenant-waits', 'tenant-quiet', 'tenant-loud'])
      sessions[user] = await openSession(user);
    const steadySession = await openSession('tenant-steady');
    steady = new SteadyTenant(running.ingest.url, 'tenant-steady', steadySession);
    steady.start();
  });

  afterAll(async () => {
    await steady?.stop();
    await running?.stop();
  });

  it('counts every event acknowledged while a materialized view refused its inserts once in every rollup', async () => {
    expect(await sendEvents('tenant-views', 10)).toEqual(Array(10).fill(201));
    expect((await admin('/_faults/clickhouse-views?seconds=4')).status).toBe(200);
    const faultEnds = Date.now() + 4_000;
    // Acknowledged while usage_events and some views take each round and one view refuses it.
    expect(await sendEvents('tenant-views', 20)).toEqual(Array(20).fill(201));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, faultEnds - Date.now()) + 500));
    expect(await sendEvents('tenant-views', 5)).toEqual(Array(5).fill(201));
    await expectViewsExact(ledger, running.query.url, ['tenant-views'], settle);
    await expectRollupsEqualEvents('tenant-views');
  }, 90_000);

  it.runIf(mode.journal)(
    'says not ready within 5 s of the journal refusing writes, answers writes a clear 503 meanwhile, and recovers without a restart',
    async () => {
      const from = Date.now();
      const window = { from, to: from + 10_000 };
      refusals.push(window);
      expect((await admin('/_faults/journal-writes?seconds=8')).status).toBe(200);
      const faultEnds = Date.now() + 8_000;
      const notReady = await settle(async () => {
        const ready = await call<{ checks: Record<string, string> }>(running.query.url, 'GET', '/readyz');
        expect(ready.status).toBe(503);
        return { ms: Date.now() - from, checks: ready.body.checks };
      });
      expect(notReady.ms).toBeLessThan(5_000);
      expect(notReady.checks.journal).toBe('unavailable');

      const started = Date.now();
      const refused = await call(
        running.ingest.url,
        'POST',
        '/api/usage/events',
        makeUsageEventBody(sessions['tenant-views']!, { user_id: 'tenant-views', quantity: 25 }),
      );
      const create = await call(running.ingest.url, 'POST', '/api/sessions/', {
        room_name: `tenant-views-${randomUUID()}`,
        user_id: 'tenant-views',
      });
      expect([refused.status, refused.headers.get('retry-after'), typeof refused.body.detail]).toEqual([
        503,
        '1',
        'string',
      ]);
      expect([create.status, create.headers.get('retry-after'), Date.now() < faultEnds]).toEqual([503, '1', true]);
      expect(Date.now() - started).toBeLessThan(3_000);

      await settle(async () => expect((await fetch(`${running.query.url}/readyz`)).status).toBe(200));
      window.to = Date.now();
      expect(await sendEvents('tenant-views', 3)).toEqual([201, 201, 201]);
      await expectViewsExact(ledger, running.query.url, ['tenant-views'], settle);
    },
    60_000,
  );

  it.runIf(mode.journal)(
    "answers a tenant's cost reads at once while another tenant's acknowledged records wait for the writer",
    async () => {
      expect(await sendEvents('tenant-quiet', 2)).toEqual([201, 201]);
      await expectViewsExact(ledger, running.query.url, ['tenant-quiet'], settle);
      expect((await admin('/_faults/clickhouse-inserts?seconds=6')).status).toBe(200);
      const faultEnds = Date.now() + 6_000;
      // Acknowledged into the journal; the writer cannot store it while ClickHouse refuses.
      expect(await sendEvents('tenant-loud', 1)).toEqual([201]);
      const summaryOf = (user: string) =>
        call<{ total_cost: string }>(running.query.url, 'GET', '/api/costs/summary', undefined, { 'x-user-id': user });
      let loudAnswered = false;
      const loud = summaryOf('tenant-loud').finally(() => (loudAnswered = true));
      const quiet = await summaryOf('tenant-quiet');
      // The quiet tenant's read waits for its own records only: answered, whole and not stale, while the
      // loud tenant's read still waits for its record and the writer still cannot store.
      expect([quiet.status, quiet.headers.get('x-callmeter-stale-read'), loudAnswered, Date.now() < faultEnds]).toEqual(
        [200, null, false, true],
      );
      expect(quiet.body.total_cost).toBe(EVENT_COST.times(2).toFixed());
      const answered = await loud;
      expect([answered.status, answered.headers.get('x-callmeter-stale-read')]).toEqual([200, null]);
      expect(answered.body.total_cost).toBe(EVENT_COST.toFixed());
      await expectViewsExact(ledger, running.query.url, ['tenant-quiet', 'tenant-loud'], settle);
    },
    60_000,
  );

  it.runIf(mode.journal)(
    'answers a request behind a writer that cannot store within the documented wait, and the next at once',
    async () => {
      expect((await admin('/_faults/clickhouse-inserts?seconds=12')).status).toBe(200);
      const faultEnds = Date.now() + 12_000;
      // Acknowledged into the journal; the writer cannot store it while ClickHouse refuses.
      expect(await sendEvents('tenant-waits', 1)).toEqual([201]);
      const started = Date.now();
      const created = await call<{ id: string }>(running.ingest.url, 'POST', '/api/sessions/', {
        room_name: `tenant-waits-${randomUUID()}`,
        user_id: 'tenant-waits',
        agent_id: 'agent-tenant-waits',
      });
      const waited = Date.now() - started;
      expect(created.status).toBe(201);
      ledger.addSession(created.body.id, 'tenant-waits', 'agent-tenant-waits');
      // One wait of the journal per request (its reads do not wait again), with room for a loaded machine.
      expect(waited).toBeLessThan(JOURNAL_WAIT_MS + 3_000);
      const next = Date.now();
      const summary = await call(running.query.url, 'GET', '/api/costs/summary', undefined, {
        'x-user-id': 'tenant-waits',
      });
      expect(summary.status).toBe(200);
      // Behind the same stalled writer, the next request answers from what is stored without waiting again.
      expect(Date.now() - next).toBeLessThan(3_000);
      expect(Date.now()).toBeLessThan(faultEnds);
      await expectViewsExact(ledger, running.query.url, ['tenant-waits'], settle);
      await expectRollupsEqualEvents('tenant-waits');
    },
    90_000,
  );

  it('ends with every view of every tenant equal to its accepted events, every rollup equal to usage_events', async () => {
    await steady.stop();
    ledger.addTotal(steady.sessionId, steady.total);
    await expectViewsExact(ledger, running.query.url, ledger.users(), settle);
    await expectRollupsEqualEvents();
  }, 120_000);

  it("answered the steady tenant's every request with a success, but for a clear 503 while the journal refused writes", () => {
    const refusedAt = (at: string) =>
      refusals.some(({ from, to }) => Date.parse(at) >= from - 1_000 && Date.parse(at) <= to + 1_000);
    expect(steady.requests.length).toBeGreaterThan(20);
    expect(
      steady.requests.filter(
        (request) =>
          !((request.status >= 200 && request.status < 300) || (request.status === 503 && refusedAt(request.at))) ||
          request.ms >= 3_000,
      ),
    ).toEqual([]);
  });

  it('ends ready', async () => {
    for (const process of new Set([running.ingest, running.query]))
      expect([process.url, (await fetch(`${process.url}/readyz`)).status]).toEqual([process.url, 200]);
  });
});
