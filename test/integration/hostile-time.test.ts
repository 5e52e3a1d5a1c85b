import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { CostLedger, expectViewsExact, openLedgerSession } from '../support/cost-ledger.ts';
import { eventually } from '../support/harness.ts';
import { hostileModes, type Running } from '../support/hostile-modes.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';

// Time and money as a hostile tenant and an unlucky worker meet them: usage replayed from a spool long
// after its call ended, usage claimed for after the end, a price in another currency, an end in the year
// 9999, and the duration every view lists, while another tenant posts usage steadily beside.

const GRACE_SECONDS = 60;
const GRACE = { USAGE_GRACE_AFTER_END_SECONDS: String(GRACE_SECONDS), LOG_LEVEL: 'warn' };
const [EMBEDDED, APART] = hostileModes('hostile-time', { all: GRACE });
const MODES = [
  { ...EMBEDDED, listsStoredSessions: true },
  // The session list reads ingest's ClickHouse: here an embedded one of its own, which the consumer
  // does not write (in production both use one server).
  { ...APART, listsStoredSessions: false },
] as const;

// resemble: 0.00004 a character on the default card.
const characters = (n: number) => new Exact('0.00004').times(n);
const MINUTE_MS = 60_000;

interface SessionBody {
  readonly id: string;
  readonly status: string;
  readonly ended_at: string | null;
  readonly duration: number | null;
}

describe.each(MODES)('time and currency as hostile tenants use them, beside a steady one, on $name', (mode) => {
  let running: Running;
  let steady: SteadyTenant;
  const ledger = new CostLedger();
  const settle = <T>(check: () => Promise<T>) => eventually(check, 30_000, 200);

  const openSession = (user: string) => openLedgerSession(running.ingest.url, ledger, user);

  const patch = (id: string, body: Record<string, unknown>) =>
    call<SessionBody & { detail: unknown }>(running.ingest.url, 'PATCH', `/api/sessions/${id}`, body);

  /** A usage event of `user` in `session`, at `atMs` (none: at its receipt), counted when accepted. */
  function usage(user: string, session: string, n: number, atMs: number | null, eventId = randomUUID()) {
    return {
      session_id: session,
      user_id: user,
      provider: 'resemble',
      event_type: 'tts_characters',
      quantity: n,
      event_id: eventId,
      ...(atMs === null ? {} : { timestamp: new Date(atMs).toISOString() }),
    };
  }

  async function send(body: ReturnType<typeof usage>) {
    const answer = await call<{ detail: string }>(running.ingest.url, 'POST', '/api/usage/events', body);
    if (answer.status === 201) ledger.accept(body.session_id, body.event_id, characters(body.quantity));
    return answer;
  }

  beforeAll(async () => {
    running = await mode.start();
    const steadySession = await openSession('tenant-steady');
    steady = new SteadyTenant(running.ingest.url, 'tenant-steady', steadySession);
    expect((await send(usage('tenant-steady', steadySession, 1, null))).status).toBe(201);
    steady.start();
  });

  afterAll(async () => {
    await steady?.stop();
    await running?.stop();
  });

  it('takes usage spooled inside a call whenever it is replayed, counts a replayed event once, and refuses usage claimed past the end plus the grace with a 409', async () => {
    const user = 'tenant-spool';
    const session = await openSession(user);
    const endMs = Date.now() - 10 * MINUTE_MS;
    expect((await patch(session, { status: 'COMPLETED', ended_at: new Date(endMs).toISOString() })).status).toBe(200);
    // The spool of a worker that lost its connection during the call, replayed ten minutes after the end.
    const spooled = [9, 5, 1].map((minutesBefore, i) =>
      usage(user, session, 10 + i, endMs - minutesBefore * MINUTE_MS),
    );
    expect((await send(spooled[0]!)).status).toBe(201);
    const batch = await call<{ status: string }[]>(running.ingest.url, 'POST', '/api/usage/events/batch', [
      spooled[1],
      spooled[2],
    ]);
    expect(batch.body.map((item) => item.status)).toEqual(['accepted', 'accepted']);
    for (const body of spooled.slice(1)) ledger.accept(session, body.event_id, characters(body.quantity));
    // Replayed again (the worker never saw the answer): the same events, counted once.
    expect((await send(spooled[0]!)).status).toBe(201);
    // Within the grace after the end: still the call's.
    expect((await send(usage(user, session, 7, endMs + (GRACE_SECONDS - 1) * 1000))).status).toBe(201);

    const pastGrace = endMs + (GRACE_SECONDS + 1) * 1000;
    const refused = await send(usage(user, session, 3, pastGrace));
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toBe(
      `Session ended at ${new Date(endMs).toISOString()}; usage at ${new Date(pastGrace).toISOString()} is more than ${GRACE_SECONDS} seconds after its end: it takes no more usage`,
    );
    // Usage without a timestamp occurred at its receipt, ten minutes after the end.
    expect((await send(usage(user, session, 3, null))).status).toBe(409);
    const refusedItems = await call<{ status: string; errors?: { loc: unknown[] }[] }[]>(
      running.ingest.url,
      'POST',
      '/api/usage/events/batch',
      [usage(user, session, 3, pastGrace), usage(user, session, 4, endMs - MINUTE_MS)],
    );
    expect(refusedItems.body).toMatchObject([
      { status: 'rejected', errors: [{ loc: ['body', 0, 'session_id'] }] },
      { status: 'accepted' },
    ]);
    ledger.addTotal(session, characters(4));
    await expectViewsExact(ledger, running.query.url, [user], settle);
  }, 60_000);

  it('refuses a tenant rate in another currency than the card’s with a 422 at currency, and every view stays in one currency', async () => {
    const user = 'tenant-euro';
    const session = await openSession(user);
    const euro = await call<{ detail: { type: string; loc: unknown[]; msg: string; input: unknown }[] }>(
      running.ingest.url,
      'POST',
      '/api/rates',
      { user_id: user, provider: 'resemble', event_type: 'tts_characters', price: '1', currency: 'EUR' },
    );
    expect(euro.status).toBe(422);
    expect(euro.body.detail).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'currency'],
        msg: "Value error, prices are in USD, every tenant's one currency: a price in EUR would be added into costs in USD",
        input: 'EUR',
        ctx: { error: {} },
      },
    ]);
    const listed = await call<{ scope: string; currency: string }[]>(
      running.query.url,
      'GET',
      `/api/rates?user_id=${user}&service=tts`,
    );
    expect(listed.status).toBe(200);
    expect(listed.body.filter((rate) => rate.scope === 'tenant')).toEqual([]);
    expect(new Set(listed.body.map((rate) => rate.currency))).toEqual(new Set(['USD']));
    expect((await send(usage(user, session, 25, null))).status).toBe(201);
    await expectViewsExact(ledger, running.query.url, [user], settle);
    const headers = { 'x-user-id': user };
    const summary = await call<{ currency: string }>(
      running.query.url,
      'GET',
      '/api/costs/summary',
      undefined,
      headers,
    );
    const breakdown = await call<{ currency: string }>(
      running.query.url,
      'GET',
      `/api/sessions/${session}/cost-breakdown`,
      undefined,
      headers,
    );
    expect([summary.body.currency, breakdown.body.currency]).toEqual(['USD', 'USD']);
  }, 60_000);

  it('refuses an ended_at of 9999-12-31 or the year 2300 with a 422 at ended_at, and the session stays live', async () => {
    const user = 'tenant-forever';
    const session = await openSession(user);
    for (const endedAt of ['9999-12-31T00:00:00Z', '2300-01-01T00:00:00Z']) {
      const answer = await patch(session, { status: 'COMPLETED', ended_at: endedAt });
      expect(answer.status).toBe(422);
      expect(answer.body.detail).toEqual([
        {
          type: 'value_error',
          loc: ['body', 'ended_at'],
          msg: 'Value error, ended_at is more than 5 minutes in the future',
          input: new Date(endedAt).toISOString(),
          ctx: { error: {} },
        },
      ]);
    }
    const late = await patch(session, { transfer_timestamp: '2300-01-01T00:00:00Z' });
    expect([late.status, (late.body.detail as { loc: unknown[] }[])[0]?.loc]).toEqual([
      422,
      ['body', 'transfer_timestamp'],
    ]);
    const read = await call<SessionBody>(running.ingest.url, 'GET', `/api/sessions/${session}`);
    expect(read.body).toMatchObject({ status: 'ACTIVE', ended_at: null, duration: null });
  });

  it('lists and reads the same duration, also after an end is moved', async () => {
    const user = 'tenant-duration';
    const session = await openSession(user);
    const read = async () => (await call<SessionBody>(running.ingest.url, 'GET', `/api/sessions/${session}`)).body;
    const started = await read();
    const ended = await patch(session, {
      status: 'COMPLETED',
      ended_at: new Date(Date.now() + 2 * MINUTE_MS).toISOString(),
    });
    expect(ended.status).toBe(200);
    expect(ended.body.duration).toBeGreaterThanOrEqual(110);
    expect(ended.body.duration).toBeLessThanOrEqual(130);
    expect(started.status).toBe('ACTIVE');
    const moved = await patch(session, { ended_at: new Date(Date.now() + 4 * MINUTE_MS).toISOString() });
    expect(moved.body.duration).toBeGreaterThanOrEqual(230);
    const duration = moved.body.duration;
    expect((await read()).duration).toBe(duration);
    if (!mode.listsStoredSessions) return;
    await settle(async () => {
      const listed = await call<{ sessions: SessionBody[] }>(
        running.ingest.url,
        'GET',
        '/api/sessions/?limit=10',
        undefined,
        { 'x-user-id': user },
      );
      expect(listed.body.sessions.map((s) => [s.id, s.duration, s.ended_at])).toEqual([
        [session, duration, moved.body.ended_at],
      ]);
    });
  }, 60_000);

  it('ends with every view of every tenant equal to the exact sum of its accepted events', async () => {
    await steady.stop();
    ledger.addTotal(steady.sessionId, steady.total);
    await expectViewsExact(ledger, running.query.url, ledger.users(), settle);
  }, 120_000);

  it("answered the steady tenant's every request with a success throughout", () => {
    const seconds = (Date.now() - steady.startedAt) / 1000;
    expect(steady.requests.length).toBeGreaterThan(seconds / 1.2);
    expect(steady.requests.filter((request) => request.status < 200 || request.status >= 300)).toEqual([]);
  });
});
