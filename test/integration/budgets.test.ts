import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, oneProcessModes } from '../support/harness.ts';
import { EventStreamReader } from '../support/event-stream-reader.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const WEBHOOK_ENV = { WEBHOOK_ALLOW_PRIVATE: '1', WEBHOOK_POLL_MS: '200', WEBHOOK_RETRY_BASE_MS: '100' };

interface Budget {
  id: string;
  amount: string;
  spent: string | null;
  remaining: string | null;
  period_start: string | null;
  period_end: string | null;
  projected_exhaustion_at: string | null;
}
interface Payload {
  type: string;
  data: Record<string, string | null>;
}

describe.each(oneProcessModes('budgets'))('budgets, alerts and caps on $name', (mode) => {
  let app: CallmeterProcess;
  const receiver = new WebhookReceiver();
  /** What the receiver took at a path, verified and parsed, one per webhook-id. */
  const delivered = (path: string) => {
    const requests = receiver.accepted(path);
    expect(requests.every((request) => request.verified)).toBe(true);
    const byId = new Map(requests.map((request) => [request.id, JSON.parse(request.body) as Payload]));
    return [...byId.values()];
  };
  const subscribe = async (user: string, path: string) => {
    const created = await call<{ secret: string }>(app.url, 'POST', '/api/webhooks', {
      url: receiver.url(path),
      user_id: user,
      events: ['budget.threshold_crossed', 'budget.exhausted', 'budget.resolved', 'call.cap_reached'],
    });
    expect(created.status).toBe(201);
    receiver.expectSecrets(path, [created.body.secret]);
  };
  const session = async (user: string, room: string, agent: string | null = null) =>
    call<{ id: string; detail?: string }>(app.url, 'POST', '/api/sessions/', {
      room_name: room,
      user_id: user,
      agent_id: agent,
    });
  const usage = async (user: string, sessionId: string, body: Record<string, unknown>) => {
    const answer = await call<{ cost: string }>(app.url, 'POST', '/api/usage/events', {
      session_id: sessionId,
      user_id: user,
      ...body,
    });
    expect(answer.status).toBe(201);
    return answer.body.cost;
  };

  beforeAll(async () => {
    await receiver.listen();
    app = await startCallmeter({ ...mode.env(), ...WEBHOOK_ENV });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await receiver.close();
  });

  it('keeps budgets as data, each read with this period’s spend, and refuses a bad one with a clear 422', async () => {
    const user = 'budgets-crud';
    const created = await call<Budget & { name: string; thresholds: string[]; time_zone: string }>(
      app.url,
      'POST',
      '/api/budgets',
      { name: 'October', user_id: user, amount: '25.00', thresholds: ['50%', '20.00'], time_zone: 'Asia/Kolkata' },
    );
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      amount: '25',
      spent: '0',
      remaining: '25',
      thresholds: ['50%', '20.00'],
      time_zone: 'Asia/Kolkata',
      projected_exhaustion_at: null,
    });
    // A month in Kolkata begins at 18:30 UTC the day before.
    expect(created.body.period_start).toMatch(/T18:30:00\.000Z$/);
    const bad = async (body: Record<string, unknown>) =>
      (await call(app.url, 'POST', '/api/budgets', { name: 'bad', user_id: user, amount: '1', ...body })).status;
    for (const body of [
      { amount: '-1' },
      { amount: 'ten' },
      { amount: 5e-324 },
      { amount: '0.0000000000000000001' },
      { time_zone: 'Mars/Olympus' },
      { thresholds: ['0%'] },
      { thresholds: ['1001%'] },
      { thresholds: ['lots'] },
      { thresholds: [] },
      { per_call: true, period: 'month' },
      { period: 'none' },
      { period: 'year' },
      { action: 'shout' },
      { filter: { colour: 'red' } },
    ])
      expect(await bad(body), JSON.stringify(body)).toBe(422);
    // The highest percentage a threshold may be, as documented.
    const highest = await call<Budget>(app.url, 'POST', '/api/budgets', {
      name: 'tenfold',
      user_id: user,
      amount: '1',
      thresholds: ['1000%'],
    });
    expect(highest.status).toBe(201);
    expect((await call(app.url, 'DELETE', `/api/budgets/${highest.body.id}`)).status).toBe(204);
    const listed = await call<Budget[]>(app.url, 'GET', `/api/budgets?user_id=${user}`);
    expect(listed.body.map((budget) => budget.id)).toEqual([created.body.id]);
    const renamed = await call<{ name: string; amount: string }>(app.url, 'PATCH', `/api/budgets/${created.body.id}`, {
      name: 'October, raised',
      amount: '30',
    });
    expect(renamed.body).toMatchObject({ name: 'October, raised', amount: '30' });
    expect((await call(app.url, 'DELETE', `/api/budgets/${created.body.id}`)).status).toBe(204);
    expect((await call(app.url, 'GET', `/api/budgets/${created.body.id}`)).status).toBe(404);
    expect((await call<Budget[]>(app.url, 'GET', `/api/budgets?user_id=${user}`)).body).toEqual([]);
  });

  it('fires each threshold once as a signed webhook when the spend reaches it, then blocks new calls of the spent budget with a 402', async () => {
    const user = 'budgets-block';
    await subscribe(user, '/block');
    const budget = await call<Budget>(app.url, 'POST', '/api/budgets', {
      name: 'daily cap',
      user_id: user,
      amount: '1',
      period: 'day',
      thresholds: ['50%', '0.90'],
      action: 'block',
    });
    expect(budget.status).toBe(201);
    const call1 = await session(user, 'block-room', 'agent-1');
    expect(call1.status).toBe(201);
    // Deepgram at 0.0077 a minute: 70 minutes pass 50 %, 120 pass 0.90, 140 pass the amount.
    const costs = [await usage(user, call1.body.id, { provider: 'deepgram', event_type: 'stt_minutes', quantity: 70 })];
    await eventually(async () =>
      expect(delivered('/block').map((payload) => [payload.type, payload.data.threshold, payload.data.spent])).toEqual([
        ['budget.threshold_crossed', '50%', '0.539'],
      ]),
    );
    costs.push(await usage(user, call1.body.id, { provider: 'deepgram', event_type: 'stt_minutes', quantity: 50 }));
    costs.push(await usage(user, call1.body.id, { provider: 'deepgram', event_type: 'stt_minutes', quantity: 20 }));
    await eventually(async () => {
      const payloads = delivered('/block');
      expect(payloads.map((payload) => [payload.type, payload.data.threshold])).toEqual(
        expect.arrayContaining([
          ['budget.threshold_crossed', '50%'],
          ['budget.threshold_crossed', '0.90'],
          ['budget.exhausted', '100%'],
        ]),
      );
      expect(payloads).toHaveLength(3);
    });
    const exhausted = delivered('/block').find((payload) => payload.type === 'budget.exhausted')!;
    expect(exhausted.data).toMatchObject({ budget_id: budget.body.id, user_id: user, amount: '1', action: 'block' });
    expect(exhausted.data.period_start).toBe(budget.body.period_start);
    const read = await call<Budget>(app.url, 'GET', `/api/budgets/${budget.body.id}`);
    expect(read.body).toMatchObject({ spent: '1.078', remaining: '0', projected_exhaustion_at: null });

    // A new call of the spent budget's scope is refused, naming it; the running call's usage is still taken.
    // Each try a new room: a try that got in would be joined by the next, and joining is never refused.
    let tries = 0;
    await eventually(async () => {
      const refused = await session(user, `block-room-try-${tries++}`, 'agent-2');
      expect(refused.status).toBe(402);
      expect(refused.body.detail).toContain(budget.body.id);
    });
    await usage(user, call1.body.id, { provider: 'deepgram', event_type: 'stt_minutes', quantity: 1 });
    // Fired once: later evaluations of the same spend send nothing more.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(delivered('/block')).toHaveLength(3);
    // Raised above the spend, the budget is resolved once and lets calls in again; an amount of money
    // as a threshold, reached this period already, does not fire again.
    await call(app.url, 'PATCH', `/api/budgets/${budget.body.id}`, { amount: '5' });
    await eventually(async () => expect((await session(user, 'block-room-3', 'agent-2')).status).toBe(201));
    await eventually(async () => {
      const resolved = delivered('/block').filter((payload) => payload.type === 'budget.resolved');
      expect(resolved.map((payload) => [payload.data.reason, payload.data.amount, payload.data.spent])).toEqual([
        ['raised', '5', '1.0857'],
      ]);
    });
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(delivered('/block')).toHaveLength(4);
  });

  it('caps a single call: its budget answer turns and call.cap_reached names the call', async () => {
    const user = 'budgets-cap';
    await subscribe(user, '/cap');
    const cap = await call<Budget>(app.url, 'POST', '/api/budgets', {
      name: 'per call',
      user_id: user,
      agent_id: 'capped-agent',
      per_call: true,
      amount: '0.05',
      filter: { service: 'tts' },
    });
    expect(cap.status).toBe(201);
    expect(cap.body).toMatchObject({ spent: null, period_start: null, projected_exhaustion_at: null });
    const running = await session(user, 'cap-room', 'capped-agent');
    const other = await session(user, 'uncapped-room', 'free-agent');
    // Resemble at 0.00004 a character: 1,000 are 0.04, below the cap; 500 more pass it.
    await usage(user, running.body.id, { provider: 'resemble', event_type: 'tts_characters', quantity: 1000 });
    await usage(user, other.body.id, { provider: 'resemble', event_type: 'tts_characters', quantity: 5000 });
    const standing = async (id: string) =>
      (await call<Record<string, unknown>>(app.url, 'GET', `/api/sessions/${id}/budget`)).body;
    await eventually(async () =>
      expect(await standing(running.body.id)).toEqual({
        session_id: running.body.id,
        allowed: true,
        spent: '0.04',
        cap: '0.05',
        remaining: '0.01',
        budget_id: cap.body.id,
      }),
    );
    await eventually(async () =>
      expect(await standing(other.body.id)).toMatchObject({ allowed: true, spent: '0.2', cap: null }),
    );
    // The call's cost stream carries its standing, live usage included, and says once when the cap is passed.
    const stream = await EventStreamReader.open(`${app.url}/api/sessions/${running.body.id}/cost-stream`, {
      'x-user-id': user,
    });
    try {
      const first = (await stream.message(1)).data as { budget: Record<string, unknown> | null };
      expect([(await stream.message(1)).event, first.budget]).toEqual([
        'breakdown',
        { allowed: true, spent: '0.04', cap: '0.05', remaining: '0.01', budget_id: cap.body.id },
      ]);
      await usage(user, running.body.id, { provider: 'resemble', event_type: 'tts_characters', quantity: 500 });
      await stream.until(
        () => stream.messages.some((message) => message.event === 'cap_reached'),
        15_000,
        'cap_reached',
      );
      await usage(user, running.body.id, { provider: 'resemble', event_type: 'tts_characters', quantity: 10 });
      await stream.until(() => stream.messages.length >= 3, 15_000, 'a breakdown after the cap');
      const events = stream.messages.map((message) => message.event);
      expect(events.filter((event) => event === 'cap_reached')).toHaveLength(1);
      const reachedAt = stream.messages.find((message) => message.event === 'cap_reached')!.data as {
        budget: Record<string, unknown>;
      };
      expect(reachedAt.budget).toMatchObject({ allowed: false, remaining: '0', budget_id: cap.body.id });
    } finally {
      stream.close();
    }
    await eventually(async () => {
      expect(await standing(running.body.id)).toMatchObject({ allowed: false, spent: '0.0604', remaining: '0' });
      const reached = delivered('/cap').filter((payload) => payload.type === 'call.cap_reached');
      expect(reached.map((payload) => [payload.data.session_id, payload.data.agent_id])).toEqual([
        [running.body.id, 'capped-agent'],
      ]);
      expect(['0.06', '0.0604']).toContain(reached[0]!.data.spent);
    });
    // The uncapped agent's call, though it spent more, fired nothing.
    expect(delivered('/cap').every((payload) => payload.data.session_id === running.body.id)).toBe(true);
  });
});
