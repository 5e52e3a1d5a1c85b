import { randomUUID } from 'node:crypto';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { CostLedger, expectViewsExact, openLedgerSession } from '../support/cost-ledger.ts';
import { eventually } from '../support/harness.ts';
import { hostileModes, type Running } from '../support/hostile-modes.ts';
import {
  hostileBatch,
  hostileBody,
  hostileEvent,
  MAX_AGE_MS,
  timestampOf,
  verdictOf,
  type HostileEvent,
} from '../support/hostile-usage.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';

// Every hostile case of usage and generated variants of it, sent while another tenant posts
// usage steadily. That tenant's every request succeeds within 1 second throughout, every view of every
// tenant equals the exact Decimal sum of its accepted events, and the process stays healthy.

const GRACE = { USAGE_GRACE_AFTER_END_SECONDS: '1' };
const [EMBEDDED, APART] = hostileModes('hostile-tenants', { all: GRACE });
const MODES = [
  { ...EMBEDDED, singles: 500, batches: 30 },
  { ...APART, singles: 200, batches: 10 },
] as const;

const FUZZ_TENANTS = 3;
// resemble: 0.00004 a character.
const characters = (n: number) => new Exact('0.00004').times(n);
const MONTH_MS = 30.44 * 86_400_000;

/** fast-check's report of a failure, cut short: a counterexample of 1,000 events would fill the log. */
function shortReport<T>(details: fc.RunDetails<T>): void {
  if (details.failed) throw new Error(fc.defaultReportMessage(details)!.slice(0, 4000));
}

describe.each(MODES)('hostile tenants beside a steady one, on $name', (mode) => {
  let running: Running;
  let steady: SteadyTenant;
  const ledger = new CostLedger();
  const sessions: Record<string, string> = {};
  const fuzzSessions: string[][] = [];
  const sentIds: { id: string; user: string; session: string }[] = [];
  const post = (path: string, body: unknown) => call<unknown>(running.ingest.url, 'POST', path, body);
  const settle = <T>(check: () => Promise<T>) => eventually(check, 30_000, 200);
  const expectExact = (users: readonly string[]) => expectViewsExact(ledger, running.query.url, users, settle);

  const openSession = (user: string, agent: string | null) =>
    openLedgerSession(running.ingest.url, ledger, user, agent);

  /** One usage event of a case tenant: posted, and counted when the API accepted it. */
  async function send(name: string, overrides: Record<string, unknown>, cost: Exact) {
    const body = {
      session_id: sessions[name],
      user_id: name,
      provider: 'resemble',
      event_type: 'tts_characters',
      event_id: randomUUID(),
      ...overrides,
    };
    const answer = await post('/api/usage/events', body);
    if (answer.status === 201) ledger.accept(body.session_id as string, body.event_id as string, cost);
    return answer as { status: number; body: { detail: { type: string; loc: unknown[]; msg: string }[] | string } };
  }

  beforeAll(async () => {
    running = await mode.start();
    for (const name of ['tenant-cases', 'tenant-other', 'tenant-ended', 'tenant-csv'])
      sessions[name] = await openSession(name, `agent-${name}`);
    for (let t = 0; t < FUZZ_TENANTS; t += 1)
      fuzzSessions.push([
        await openSession(`tenant-fuzz-${t}`, `agent-fuzz-${t}`),
        await openSession(`tenant-fuzz-${t}`, null),
      ]);
    const steadySession = await openSession('tenant-steady', 'agent-steady');
    steady = new SteadyTenant(running.ingest.url, 'tenant-steady', steadySession);
    // One request first, so that the steady tenant's measured requests find the session known.
    expect(
      (
        await post('/api/usage/events', {
          session_id: steadySession,
          user_id: 'tenant-steady',
          provider: 'resemble',
          event_type: 'tts_characters',
          quantity: 1,
        })
      ).status,
    ).toBe(201);
    ledger.addTotal(steadySession, characters(1));
    steady.start();
  });

  afterAll(async () => {
    await steady?.stop();
    await running?.stop();
  });

  it('refuses the overflow reproduction (10^12 × 10^6 of an unknown provider) and token counts past the cap, pydantic-shaped', async () => {
    const reproduction = await post(
      '/api/usage/events/batch',
      Array.from({ length: 200 }, () => ({
        session_id: sessions['tenant-cases'],
        user_id: 'tenant-cases',
        provider: 'unknown',
        event_type: 'stt_minutes',
        quantity: 1e12,
        unit_cost: 1e6,
      })),
    );
    expect(reproduction.status).toBe(200);
    const items = reproduction.body as { status: string; errors: { type: string; loc: unknown[] }[] }[];
    expect(items.filter((item) => item.status !== 'rejected' || item.errors[0]!.loc[2] !== 'unit_cost')).toEqual([]);
    const refused = async (overrides: Record<string, unknown>) => {
      const answer = await send('tenant-cases', { provider: 'unknown', ...overrides }, new Exact(0));
      expect([overrides, answer.status]).toEqual([overrides, 422]);
      return (answer.body.detail as { type: string; loc: unknown[] }[])[0];
    };
    expect(await refused({ event_type: 'stt_minutes', quantity: 1e12, unit_cost: 1e6 })).toMatchObject({
      type: 'value_error',
      loc: ['body', 'unit_cost'],
    });
    expect(await refused({ event_type: 'llm_tokens', quantity: 1, input_tokens: 1e12 + 1 })).toMatchObject({
      type: 'less_than_equal',
      loc: ['body', 'input_tokens'],
    });
    expect(await refused({ event_type: 'llm_tokens', usage_data: { output_tokens: 1e12 + 1 } })).toMatchObject({
      type: 'less_than_equal',
      loc: ['body', 'usage_data', 'output_tokens'],
    });
    expect(
      await refused({ event_type: 'llm_tokens', usage_data: { input_tokens: 6e11, output_tokens: 6e11 } }),
    ).toMatchObject({ type: 'value_error', loc: ['body', 'usage_data'] });
    expect(await refused({ event_type: 'stt_minutes', quantity: '1e21' })).toMatchObject({ loc: ['body', 'quantity'] });
    await expectExact(['tenant-cases']);
  });

  it('takes the instants of a batch spanning 110 months that lie in the window, refuses the rest at their timestamp, and refuses 1850 and the far future', async () => {
    const now = Date.now();
    const body = Array.from({ length: 110 }, (_, i) => ({
      session_id: sessions['tenant-cases'],
      user_id: 'tenant-cases',
      provider: 'resemble',
      event_type: 'tts_characters',
      quantity: 10 + i,
      event_id: randomUUID(),
      timestamp: new Date(now - 60_000 - i * MONTH_MS).toISOString(),
    }));
    const answer = await post('/api/usage/events/batch', body);
    expect(answer.status).toBe(200);
    const items = answer.body as { status: string; errors?: { type: string; loc: unknown[] }[] }[];
    items.forEach((item, i) => {
      if (item.status === 'accepted') ledger.accept(sessions['tenant-cases']!, body[i]!.event_id, characters(10 + i));
    });
    const inWindow = body.map((event) => Date.parse(event.timestamp) > now - MAX_AGE_MS);
    expect(items.map((item) => item.status)).toEqual(inWindow.map((ok) => (ok ? 'accepted' : 'rejected')));
    expect(
      items.filter(
        (item) =>
          item.status === 'rejected' && item.errors![0]!.loc.join('.') !== `body.${items.indexOf(item)}.timestamp`,
      ),
    ).toEqual([]);
    for (const timestamp of [
      '1850-01-01T00:00:00Z',
      '1969-12-31T23:59:59Z',
      '2200-01-01T00:00:00Z',
      '9999-12-31T23:59:59Z',
      new Date(Date.now() + 6 * 60_000).toISOString(),
    ]) {
      const refused = await send('tenant-cases', { quantity: 1, timestamp }, characters(1));
      expect([timestamp, refused.status, (refused.body.detail as { loc: unknown[] }[])[0]?.loc]).toEqual([
        timestamp,
        422,
        ['body', 'timestamp'],
      ]);
    }
    expect(
      (
        await send(
          'tenant-cases',
          { quantity: 4, timestamp: new Date(Date.now() + 4 * 60_000).toISOString() },
          characters(4),
        )
      ).status,
    ).toBe(201);
    // The default timeline begins at the tenant's first usage: it answers for everything the tenant holds.
    await expectExact(['tenant-cases']);
  });

  it('counts an event of each tenant that share an event_id, each in its own tenant, and a resend once', async () => {
    const shared = randomUUID();
    expect((await send('tenant-other', { quantity: 7, event_id: shared }, characters(7))).status).toBe(201);
    expect((await send('tenant-cases', { quantity: 5, event_id: shared }, characters(5))).status).toBe(201);
    expect((await send('tenant-cases', { quantity: 5, event_id: shared }, characters(5))).status).toBe(201);
    await expectExact(['tenant-cases', 'tenant-other']);
    const listed = await call<{ events: { id: string }[] }>(
      running.query.url,
      'GET',
      `/api/sessions/${sessions['tenant-other']}/cost-breakdown`,
    );
    expect(listed.body.events.map((event) => event.id)).toContain(shared);
  });

  it('answers 409 to usage without a timestamp arriving more than the grace after its session ended, and a rejected item in a batch', async () => {
    expect((await send('tenant-ended', { quantity: 3 }, characters(3))).status).toBe(201);
    const ended = await call(running.ingest.url, 'PATCH', `/api/sessions/${sessions['tenant-ended']}`, {
      status: 'COMPLETED',
    });
    expect(ended.status).toBe(200);
    // Within the 1-second grace usage is still taken (and counted); after it, never again.
    const late = await eventually(
      async () => {
        const answer = await send('tenant-ended', { quantity: 2 }, characters(2));
        expect(answer.status).toBe(409);
        return answer;
      },
      10_000,
      250,
    );
    expect(late.body.detail).toMatch(
      /^Session ended at .*; usage at .* is more than 1 seconds after its end: it takes no more usage$/,
    );
    const batch = await post('/api/usage/events/batch', [
      {
        session_id: sessions['tenant-ended'],
        user_id: 'tenant-ended',
        provider: 'resemble',
        event_type: 'tts_characters',
        quantity: 2,
      },
    ]);
    expect(batch.body).toMatchObject([{ status: 'rejected', errors: [{ loc: ['body', 0, 'session_id'] }] }]);
    await expectExact(['tenant-ended']);
  });

  it('answers every generated event (magnitudes 10^0 to 10^20, many decimals, instants at and past the window) with its verdict, never a 5xx', async () => {
    const statuses = new Set<number>();
    await fc.assert(
      fc.asyncProperty(hostileEvent(FUZZ_TENANTS), async (event) => {
        const [status, verdict] = await sendGenerated(event);
        statuses.add(status);
        expect(status).toBeLessThan(500);
        if (verdict.valid !== null) expect([verdict.valid, status]).toEqual([verdict.valid, verdict.valid ? 201 : 422]);
      }),
      { seed: 16_010, numRuns: mode.singles, endOnFailure: true, reporter: shortReport },
    );
    // The generators reach both sides of the bounds (about a fifth of the events are stored).
    expect([...statuses].sort()).toEqual([201, 422]);
    await expectExact(fuzzUsers());
  }, 120_000);

  it('answers every generated batch of 1 to 1,000 valid and invalid items item by item, never a 5xx', async () => {
    const outcomes = new Set<string>();
    await fc.assert(
      fc.asyncProperty(hostileBatch(FUZZ_TENANTS), async (events) => {
        const sentAt = Date.now();
        const prepared = events.map((event) => prepare(event, sentAt));
        const answer = await post(
          '/api/usage/events/batch',
          prepared.map((item) => item.body),
        );
        expect(answer.status).toBe(200);
        const items = answer.body as { status: string }[];
        for (const item of items) outcomes.add(item.status);
        // A repeat of an id its user had in an accepted item before in the same batch is a duplicate.
        const acceptedHere = new Set<string>();
        items.forEach((item, i) => {
          const { body, verdict } = prepared[i]!;
          const key = `${body.user_id as string} ${body.event_id as string}`;
          if (item.status === 'accepted')
            ledger.accept(body.session_id as string, body.event_id as string, verdict.cost);
          if (verdict.valid === true)
            expect([i, item.status]).toEqual([i, acceptedHere.has(key) ? 'duplicate' : 'accepted']);
          if (verdict.valid === false) expect([i, item.status]).toEqual([i, 'rejected']);
          if (item.status === 'accepted') acceptedHere.add(key);
        });
      }),
      { seed: 16_011, numRuns: mode.batches, endOnFailure: true, reporter: shortReport },
    );
    expect([...outcomes].sort()).toEqual(['accepted', 'duplicate', 'rejected']);
    await expectExact(fuzzUsers());
  }, 120_000);

  it('bounds a timeline CSV of 1,000 providers over 9,000 days: a 4xx, or a streamed answer that adds up', async () => {
    const events = Array.from({ length: 1000 }, (_, i) => ({
      session_id: sessions['tenant-csv'],
      user_id: 'tenant-csv',
      provider: `p${i}-${'x'.repeat(500)}`,
      event_type: 'tts_characters',
      quantity: 1,
      total_cost: '0.000001',
      event_id: randomUUID(),
    }));
    // About 1.1 MB of records: through Kafka one request's records past 1 MB are a 413 with nothing stored
    // (docs/architecture.md, the record path); the same events then go in four batches.
    const whole = await post('/api/usage/events/batch', events);
    expect([whole.status, whole.text.slice(0, 300)]).toEqual([
      expect.toSatisfy((status: number) => status === 200 || status === 413),
      expect.any(String),
    ]);
    for (const batch of whole.status === 200
      ? [events]
      : [0, 1, 2, 3].map((part) => events.slice(part * 250, (part + 1) * 250))) {
      const answer = whole.status === 200 ? whole : await post('/api/usage/events/batch', batch);
      expect([answer.status, answer.text.slice(0, 300)]).toEqual([200, expect.any(String)]);
      const items = answer.body as { status: string }[];
      items.forEach(
        (item, i) =>
          item.status === 'accepted' &&
          ledger.accept(sessions['tenant-csv']!, batch[i]!.event_id, new Exact('0.000001')),
      );
      expect(items.filter((item) => item.status !== 'accepted')).toEqual([]);
    }
    await expectExact(['tenant-csv']);
    const start = new Date(Date.now() - 9000 * 86_400_000).toISOString().slice(0, 10);
    const csv = await fetch(`${running.query.url}/api/costs/timeline?period=daily&format=csv&start_date=${start}`, {
      headers: { 'x-user-id': 'tenant-csv' },
    });
    const text = await csv.text();
    expect([400, 413, 422, 200]).toContain(csv.status);
    if (csv.status !== 200) return expect(JSON.parse(text)).toHaveProperty('detail');
    const rows = text.trimEnd().split('\r\n');
    const totalColumn = rows[0]!.split(',').indexOf('total_cost');
    expect(Exact.sum(0, ...rows.slice(1).map((row) => row.split(',')[totalColumn]!)).toFixed()).toBe('0.001');
    // A CSV is streamed, so the process never holds the whole answer in memory.
    expect({ streamed: csv.headers.get('content-length') === null, bytes: text.length }).toMatchObject({
      streamed: true,
    });
  }, 120_000);

  it('refuses a session list page over 1,000 with a 422 less_than_equal', async () => {
    const page = await call<{ sessions: unknown[] }>(
      running.ingest.url,
      'GET',
      '/api/sessions/?limit=1000',
      undefined,
      { 'x-user-id': 'tenant-cases' },
    );
    expect(page.status).toBe(200);
    const tooLarge = await call<{ detail: unknown[] }>(
      running.ingest.url,
      'GET',
      '/api/sessions/?limit=10000',
      undefined,
      { 'x-user-id': 'tenant-cases' },
    );
    expect([tooLarge.status, tooLarge.body.detail?.[0]]).toEqual([
      422,
      expect.objectContaining({ type: 'less_than_equal', loc: ['query', 'limit'], ctx: { le: 1000 } }),
    ]);
  });

  it('ends with every view of every tenant equal to the exact sum of its accepted events, none negative', async () => {
    await steady.stop();
    ledger.addTotal(steady.sessionId, steady.total);
    await expectExact(ledger.users());
  }, 120_000);

  it("answered the steady tenant's every request with a success, within 1 second but for one in a hundred, throughout", () => {
    const ms = steady.requests.map((request) => request.ms).sort((a, b) => a - b);
    const seen = {
      requests: ms.length,
      p50_ms: Math.round(ms[Math.floor(ms.length / 2)]!),
      max_ms: Math.round(ms.at(-1)!),
      over_seconds: Math.round((Date.now() - steady.startedAt) / 1000),
    };
    // One request at a time, 100 to 200 ms apart: with answers within 1 second (checked below), at least
    // one request every 1.2 s throughout; fewer means the tenant waited on something unanswered.
    expect(seen.requests, JSON.stringify(seen)).toBeGreaterThan((seen.over_seconds * 1000) / 1200);
    expect(
      steady.requests.filter((request) => request.status < 200 || request.status >= 300 || request.ms >= 3000),
      JSON.stringify(seen),
    ).toEqual([]);
    // A tenant starved by the others waits again and again; one answer past a second in a hundred is the
    // machine's (two cores shared with the broker, Redis and the other test files).
    const slow = steady.requests.filter((request) => request.ms >= 1000);
    expect(slow.length, JSON.stringify({ ...seen, slow })).toBeLessThanOrEqual(Math.floor(seen.requests / 100));
  });

  it('stays healthy and ready', async () => {
    for (const process of new Set([running.ingest, running.query])) {
      for (const path of ['/healthz', '/readyz'])
        expect([process.url, path, (await fetch(`${process.url}${path}`)).status]).toEqual([process.url, path, 200]);
    }
  });

  function fuzzUsers(): string[] {
    return fuzzSessions.map((_, t) => `tenant-fuzz-${t}`);
  }

  /**
   * The body of a generated event, with its event id (fresh, or any tenant's earlier one) and verdict.
   * A user's own id sent again goes to the session it was first sent to, as a client's retry does: over
   * Kafka, records are ordered per session only, so which of two different events of one user under one
   * id is counted when they are in different sessions is not defined (docs/architecture.md, exactly once).
   */
  function prepare(event: HostileEvent, sentAt: number) {
    const user = `tenant-fuzz-${event.tenant}`;
    const reused =
      event.reuse === null || sentIds.length === 0 ? undefined : sentIds[Math.floor(event.reuse * sentIds.length)]!;
    const eventId = reused?.id ?? randomUUID();
    const session = reused?.user === user ? reused.session : fuzzSessions[event.tenant]![event.session]!;
    sentIds.push({ id: eventId, user, session });
    const timestamp = timestampOf(event.time, sentAt);
    const body = hostileBody(event, { session_id: session, user_id: user, event_id: eventId }, timestamp);
    return { body, verdict: verdictOf(event, timestamp, sentAt) };
  }

  async function sendGenerated(event: HostileEvent) {
    const { body, verdict } = prepare(event, Date.now());
    const answer = await post('/api/usage/events', body);
    if (answer.status === 201) ledger.accept(body.session_id as string, body.event_id as string, verdict.cost);
    return [answer.status, verdict] as const;
  }
});
