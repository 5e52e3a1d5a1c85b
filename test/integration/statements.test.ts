import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, oneProcessModes } from '../support/harness.ts';

const USER = 'statements-a';

interface Line {
  kind: string;
  period: string;
  service: string;
  provider: string;
  quantity: string;
  unit_price: string;
  cost: string;
}
interface Statement {
  user_id: string;
  period: string;
  status: string;
  version: number;
  closed_at: string | null;
  total_cost: string;
  lines: Line[];
}

/** The month before the current one (UTC), which has ended, and instants in it and in this month. */
function months(now = Date.now()) {
  const current = new Date(now);
  const thisStart = Date.UTC(current.getUTCFullYear(), current.getUTCMonth(), 1);
  const previous = new Date(thisStart - 1).toISOString().slice(0, 7);
  return {
    previous,
    current: current.toISOString().slice(0, 7),
    // Two hours before the month's end: always within the usage window (35 days).
    inPrevious: (minutes: number) => new Date(thisStart - 2 * 3_600_000 + minutes * 60_000).toISOString(),
    inCurrent: new Date(Math.max(thisStart + 1_000, now - 60_000)).toISOString(),
  };
}

const MODES = oneProcessModes('statements');

describe.each(MODES)('closed periods and statements on $name', (mode) => {
  let app: CallmeterProcess;
  let sessionId: string;
  const ids: string[] = [];
  const costs: string[] = [];
  /** Instants just before the close and the void, for the as-of reads. */
  const instants = { beforeClose: '', beforeVoid: '' };
  const { previous, current, inPrevious, inCurrent } = months();
  const statement = async (period: string) =>
    (await call<Statement>(app.url, 'GET', `/api/statements/${USER}/${period}`)).body;
  const summaryTotal = async () =>
    (await call<{ total_cost: string }>(app.url, 'GET', '/api/costs/summary', undefined, { 'x-user-id': USER })).body
      .total_cost;

  beforeAll(async () => {
    app = await startCallmeter(mode.env());
    const session = await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
      room_name: 'statements-room',
      user_id: USER,
      agent_id: 'statements-agent',
    });
    sessionId = session.body.id;
    const events = [
      { provider: 'deepgram', event_type: 'stt_minutes', quantity: 3, timestamp: inPrevious(1) },
      { provider: 'resemble', event_type: 'tts_characters', quantity: 900, timestamp: inPrevious(2) },
      { provider: 'deepgram', event_type: 'stt_minutes', quantity: 5, timestamp: inCurrent },
    ];
    for (const event of events) {
      const answer = await call<{ id: string; cost: string }>(app.url, 'POST', '/api/usage/events', {
        session_id: sessionId,
        user_id: USER,
        ...event,
      });
      expect(answer.status).toBe(201);
      ids.push(answer.body.id);
      costs.push(answer.body.cost);
    }
    await eventually(async () => expect(await summaryTotal()).toBe(Exact.sum(0, ...costs).toFixed()));
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('answers an open month’s statement line by line, then closes it once, and only a month that has ended', async () => {
    const open = await statement(previous);
    expect(open).toMatchObject({ user_id: USER, period: previous, status: 'open', version: 0, closed_at: null });
    expect(open.total_cost).toBe(Exact.sum(0, costs[0]!, costs[1]!).toFixed());
    expect(open.lines.map((line) => [line.kind, line.provider, line.quantity, line.cost])).toEqual([
      ['usage', 'deepgram', '3', costs[0]],
      ['usage', 'resemble', '900', costs[1]],
    ]);

    instants.beforeClose = new Date().toISOString();
    const closed = await call<{ status: string; version: number; closed_at: string; period: string }>(
      app.url,
      'POST',
      `/api/periods/${USER}/${previous}/close`,
    );
    expect(closed.status).toBe(200);
    expect(closed.body).toMatchObject({ user_id: USER, period: previous, status: 'closed', version: 1 });
    const again = await call(app.url, 'POST', `/api/periods/${USER}/${previous}/close`);
    expect(again.status).toBe(409);
    expect((await call(app.url, 'POST', `/api/periods/${USER}/${current}/close`)).status).toBe(409);
    expect((await call(app.url, 'POST', `/api/periods/${USER}/2026-13/close`)).status).toBe(422);

    await eventually(async () => {
      const frozen = await statement(previous);
      expect(frozen).toMatchObject({ status: 'closed', version: 1, closed_at: closed.body.closed_at });
      expect(frozen.lines).toEqual(open.lines);
    });
  });

  it('refuses usage of the closed month with a 409 naming it, alone and in a batch', async () => {
    const late = await call<{ detail: string }>(app.url, 'POST', '/api/usage/events', {
      session_id: sessionId,
      user_id: USER,
      provider: 'deepgram',
      event_type: 'stt_minutes',
      quantity: 1,
      timestamp: inPrevious(3),
    });
    expect(late.status).toBe(409);
    expect(late.body.detail).toContain(`period ${previous}`);
    const batch = await call<{ status: string }[]>(app.url, 'POST', '/api/usage/events/batch', [
      {
        session_id: sessionId,
        user_id: USER,
        provider: 'deepgram',
        event_type: 'stt_minutes',
        quantity: 1,
        timestamp: inPrevious(3),
      },
      {
        session_id: sessionId,
        user_id: USER,
        provider: 'deepgram',
        event_type: 'stt_minutes',
        quantity: 1,
        timestamp: inCurrent,
      },
    ]);
    expect(batch.body.map((item) => item.status)).toEqual(['rejected', 'accepted']);
    costs.push(new Exact(costs[2]!).div(5).toFixed());
    // A tenant price may not start inside the closed month either.
    const rate = await call(app.url, 'POST', '/api/rates', {
      user_id: USER,
      provider: 'deepgram',
      event_type: 'stt_minutes',
      price: '0.001',
      effective_from: inPrevious(0),
    });
    expect(rate.status).toBe(422);
  });

  it('puts a late correction of the closed month on this month’s statement as an adjustment line; the closed one never changes', async () => {
    const closedBefore = await statement(previous);
    instants.beforeVoid = new Date().toISOString();
    const voided = await call(
      app.url,
      'POST',
      `/api/usage/events/${ids[0]}/void`,
      { reason: 'billed twice' },
      {
        'x-user-id': USER,
      },
    );
    expect(voided.status).toBe(201);
    await eventually(async () => {
      const now = await statement(current);
      expect(now.status).toBe('open');
      const adjustments = now.lines.filter((line) => line.kind === 'adjustment');
      expect(adjustments.map((line) => [line.period, line.provider, line.quantity, line.cost])).toEqual([
        [previous, 'deepgram', '-3', new Exact(costs[0]!).negated().toFixed()],
      ]);
      const expectedNow = Exact.sum(costs[2]!, costs[3]!, new Exact(costs[0]!).negated()).toFixed();
      expect(now.total_cost).toBe(expectedNow);
    });
    expect(await statement(previous)).toEqual(closedBefore);
    // Every row is on one statement: the months add up to the summary.
    const [summary, before, now] = await Promise.all([summaryTotal(), statement(previous), statement(current)]);
    expect(summary).toBe(Exact.sum(before.total_cost, now.total_cost).toFixed());
  });

  it('answers the statement as CSV on request, and by agent', async () => {
    const csv = await fetch(`${app.url}/api/statements/${USER}/${previous}?format=csv`);
    expect(csv.headers.get('content-type')).toBe('text/csv; charset=utf-8');
    const rows = (await csv.text()).trim().split('\r\n');
    expect(rows[0]).toBe('kind,period,service,provider,model,unit,quantity,unit_price,cost,agent_id');
    expect(rows).toHaveLength(3);
    const byAgent = await call<{ lines: { agent_id: string | null }[] }>(
      app.url,
      'GET',
      `/api/statements/${USER}/${previous}?by_agent=true`,
    );
    expect(byAgent.body.lines.map((line) => line.agent_id)).toEqual(['statements-agent', 'statements-agent']);
    expect((await call(app.url, 'GET', `/api/statements/${USER}/2026-1`)).status).toBe(422);
  });

  it('answers every view as it stood at an instant: as_of leaves out what was stored later', async () => {
    const asOf = (path: string, instant: string) =>
      `${path}${path.includes('?') ? '&' : '?'}as_of=${encodeURIComponent(instant)}`;
    const get = async <T>(path: string) => (await call<T>(app.url, 'GET', path, undefined, { 'x-user-id': USER })).body;
    const beforeVoid = Exact.sum(costs[0]!, costs[1]!, costs[2]!, costs[3]!).toFixed();
    const summary = await get<{ total_cost: string; event_count: number; session_count: number; as_of: string }>(
      asOf('/api/costs/summary', instants.beforeVoid),
    );
    expect(summary).toMatchObject({
      total_cost: beforeVoid,
      event_count: 4,
      session_count: 1,
      as_of: instants.beforeVoid,
    });
    expect((await get<{ total_cost: string }>('/api/costs/summary')).total_cost).not.toBe(beforeVoid);
    const timeline = await get<{ total_cost: string }[]>(
      asOf('/api/costs/timeline?period=monthly', instants.beforeVoid),
    );
    expect(Exact.sum(0, ...timeline.map((point) => point.total_cost)).toFixed()).toBe(beforeVoid);
    const agents = await get<{ total_cost: string }[]>(asOf('/api/costs/by-agent', instants.beforeVoid));
    expect(Exact.sum(0, ...agents.map((agent) => agent.total_cost)).toFixed()).toBe(beforeVoid);
    const breakdown = await get<{ total_cost: string; events: unknown[] }>(
      asOf(`/api/sessions/${sessionId}/cost-breakdown`, instants.beforeVoid),
    );
    expect([breakdown.total_cost, breakdown.events.length]).toEqual([beforeVoid, 4]);
    // This month's statement had no adjustment then, and last month was open before its close.
    const now = await get<Statement>(asOf(`/api/statements/${USER}/${current}`, instants.beforeVoid));
    expect(now.lines.map((line) => line.kind)).toEqual(['usage']);
    const open = await get<Statement>(asOf(`/api/statements/${USER}/${previous}`, instants.beforeClose));
    expect([open.status, open.version, open.total_cost]).toEqual([
      'open',
      0,
      Exact.sum(costs[0]!, costs[1]!).toFixed(),
    ]);
    const future = await call(
      app.url,
      'GET',
      asOf('/api/costs/summary', new Date(Date.now() + 60_000).toISOString()),
      undefined,
      {
        'x-user-id': USER,
      },
    );
    expect(future.status).toBe(422);
  });

  it('reopens a closed month and closes it again as a new version; every version stays readable as it was closed', async () => {
    const first = await statement(previous);
    const reopened = await call<{ status: string; version: number; reopened_at: string | null }>(
      app.url,
      'POST',
      `/api/periods/${USER}/${previous}/reopen`,
    );
    expect(reopened.status).toBe(200);
    expect(reopened.body).toMatchObject({ status: 'open', version: 1 });
    expect(reopened.body.reopened_at).not.toBeNull();
    expect((await call(app.url, 'POST', `/api/periods/${USER}/${previous}/reopen`)).status).toBe(409);

    const late = await call<{ cost: string }>(app.url, 'POST', '/api/usage/events', {
      session_id: sessionId,
      user_id: USER,
      provider: 'resemble',
      event_type: 'tts_characters',
      quantity: 100,
      timestamp: inPrevious(4),
    });
    expect(late.status).toBe(201);
    const withLate = Exact.sum(first.total_cost, late.body.cost).toFixed();
    await eventually(async () => {
      const open = await statement(previous);
      expect([open.status, open.version, open.closed_at, open.total_cost]).toEqual(['open', 1, null, withLate]);
    });
    const closedAgain = await call<{ version: number }>(app.url, 'POST', `/api/periods/${USER}/${previous}/close`);
    expect(closedAgain.body.version).toBe(2);
    await eventually(async () => expect((await statement(previous)).status).toBe('closed'));
    const versions = async (version: number) =>
      (await call<Statement>(app.url, 'GET', `/api/statements/${USER}/${previous}?version=${version}`)).body;
    expect(await versions(1)).toEqual(first);
    expect(await versions(2)).toMatchObject({ status: 'closed', version: 2, total_cost: withLate });
    expect((await call(app.url, 'GET', `/api/statements/${USER}/${previous}?version=3`)).status).toBe(404);
    // The void stored while version 1 held stays this month's adjustment; every row is still on one statement.
    const [summary, before, now] = await Promise.all([summaryTotal(), statement(previous), statement(current)]);
    expect(now.lines.filter((line) => line.kind === 'adjustment')).toHaveLength(1);
    expect(summary).toBe(Exact.sum(before.total_cost, now.total_cost).toFixed());
  });

  it('bills a tenant’s months in its time zone, set before its first close and fixed after it', async () => {
    const user = 'statements-kolkata';
    const thisStart = Date.parse(`${current}-01T00:00:00Z`);
    // Kolkata is UTC+05:30 all year: its month began 5.5 hours before UTC's.
    const kolkataStart = thisStart - 5.5 * 3_600_000;
    const at = (ms: number) => new Date(ms).toISOString();
    const settings = (body: unknown) =>
      call<Record<string, unknown>>(app.url, 'PATCH', `/api/periods/${user}/settings`, body);
    expect((await call(app.url, 'GET', `/api/periods/${user}/settings`)).body).toEqual({
      user_id: user,
      time_zone: 'UTC',
      updated_at: null,
    });
    expect((await settings({ time_zone: 'Mars/Olympus' })).status).toBe(422);
    expect((await settings({ time_zone: 'Europe/Berlin' })).body).toMatchObject({ time_zone: 'Europe/Berlin' });
    const set = await settings({ time_zone: 'Asia/Kolkata' });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ user_id: user, time_zone: 'Asia/Kolkata' });
    await eventually(async () =>
      expect((await call(app.url, 'GET', `/api/periods/${user}/settings`)).body).toEqual(set.body),
    );

    const session = await call<{ id: string }>(app.url, 'POST', '/api/sessions/', {
      room_name: 'statements-kolkata-room',
      user_id: user,
    });
    const send = (timestamp: string) =>
      call<{ cost: string }>(app.url, 'POST', '/api/usage/events', {
        session_id: session.body.id,
        user_id: user,
        provider: 'deepgram',
        event_type: 'stt_minutes',
        quantity: 2,
        timestamp,
      });
    // Before Kolkata's month began: last month there. After it, this month, though still last month in UTC.
    const lastMonth = await send(at(kolkataStart - 60_000));
    const thisMonth = await send(at(kolkataStart + 60_000));
    expect([lastMonth.status, thisMonth.status]).toEqual([201, 201]);
    const read = async (period: string) =>
      (
        await call<Statement & { time_zone: string; period_start: string }>(
          app.url,
          'GET',
          `/api/statements/${user}/${period}`,
        )
      ).body;
    await eventually(async () => {
      const before = await read(previous);
      expect([before.time_zone, before.period_start, before.total_cost]).toEqual([
        'Asia/Kolkata',
        at(Date.parse(`${previous}-01T00:00:00Z`) - 5.5 * 3_600_000),
        lastMonth.body.cost,
      ]);
      expect((await read(current)).total_cost).toBe(thisMonth.body.cost);
    });

    expect((await call(app.url, 'POST', `/api/periods/${user}/${previous}/close`)).status).toBe(200);
    // The close is Kolkata's month: a minute before its end is refused, a minute after is this month's.
    const refused = await send(at(kolkataStart - 120_000));
    expect(refused.status).toBe(409);
    expect(JSON.stringify(refused.body)).toContain(`period ${previous} of user ${user}`);
    expect((await send(at(kolkataStart + 120_000))).status).toBe(201);
    // The months' edges are fixed once one was closed; setting the same zone again changes nothing.
    const moved = await settings({ time_zone: 'Europe/Berlin' });
    expect(moved.status).toBe(409);
    expect(JSON.stringify(moved.body)).toContain(`closed period ${previous}`);
    expect((await settings({ time_zone: 'Asia/Kolkata' })).status).toBe(200);
    await eventually(async () => {
      const summary = await call<{ total_cost: string }>(app.url, 'GET', '/api/costs/summary', undefined, {
        'x-user-id': user,
      });
      const [before, now] = await Promise.all([read(previous), read(current)]);
      expect(before.total_cost).toBe(lastMonth.body.cost);
      expect(summary.body.total_cost).toBe(Exact.sum(before.total_cost, now.total_cost).toFixed());
      expect(now.total_cost).toBe(Exact.sum(thisMonth.body.cost, thisMonth.body.cost).toFixed());
    });
  });
});
