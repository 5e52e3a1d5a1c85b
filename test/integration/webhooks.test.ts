import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Webhook } from 'standardwebhooks';
import { freePort } from '../../infra/local/free-port.ts';
import { UNPRICED_HINT } from '../../services/consumer/usage/unpriced-notices.ts';
import { call } from '../support/api.ts';
import { makeSessionBody, makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate, oneProcessModes } from '../support/harness.ts';
import { testAuthHeaders } from '../support/test-auth.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const USER = 'webhooks-a';
/** Fast retries and a short timeout, so that the schedule's shape shows within seconds. */
const WEBHOOK_ENV = {
  FAULT_INJECTION: '1',
  WEBHOOK_ALLOW_PRIVATE: '1',
  WEBHOOK_TIMEOUT_MS: '1500',
  WEBHOOK_RETRY_BASE_MS: '100',
  WEBHOOK_POLL_MS: '200',
};

interface Created {
  id: string;
  url: string;
  events: string[];
  secret: string;
}
interface Attempt {
  attempt: number;
  status_code: number | null;
  error: string | null;
  ok: boolean;
  latency_ms: number;
}
interface Delivery {
  message_id: string;
  status: string;
  attempts: Attempt[];
}

const register = async (url: string, path: string, body: Record<string, unknown>) =>
  call<Created>(url, 'POST', '/api/webhooks', { url: path, ...body });

const budgetData = (spent: string) => ({
  budget_id: 'budget-1',
  user_id: USER,
  agent_id: null,
  threshold: '90%',
  amount: '25.00',
  spent,
  period_start: '2026-11-01T00:00:00.000Z',
  period_end: '2026-12-01T00:00:00.000Z',
});

async function emit(url: string, key: string, type = 'budget.threshold_crossed', userId = USER) {
  const answer = await call<{ message_id: string; endpoints: number; duplicate: boolean }>(
    url,
    'POST',
    '/_faults/webhook-events',
    { type, user_id: userId, data: budgetData('22.5000001'), idempotency_key: key },
  );
  expect(answer.status).toBe(200);
  return answer.body;
}

const deliveries = async (url: string, id: string) =>
  (await call<Delivery[]>(url, 'GET', `/api/webhooks/${id}/deliveries`)).body;

describe.each(oneProcessModes('webhooks'))('webhooks on $name', (mode) => {
  let app: CallmeterProcess;
  const receiver = new WebhookReceiver();

  beforeAll(async () => {
    await receiver.listen();
    app = await startCallmeter({ ...mode.env(), ...WEBHOOK_ENV });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await receiver.close();
  });

  it('registers an endpoint with its secret shown once, signs every delivery, and sends an event once per key', async () => {
    const created = await register(app.url, receiver.url('/once'), {
      events: ['budget.threshold_crossed', 'budget.exhausted'],
      description: 'finance',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ url: receiver.url('/once'), status: 'enabled', user_id: null });
    expect(created.body.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    receiver.expectSecrets('/once', [created.body.secret]);
    const read = await call(app.url, 'GET', `/api/webhooks/${created.body.id}`);
    expect(read.status).toBe(200);
    expect(read.text).not.toContain('whsec_');
    const listed = await call<{ id: string }[]>(app.url, 'GET', '/api/webhooks');
    expect(listed.body.map((endpoint) => endpoint.id)).toContain(created.body.id);
    expect(listed.text).not.toContain('whsec_');

    const first = await emit(app.url, 'budget-1:2026-11:90%');
    expect(first).toMatchObject({ duplicate: false });
    expect(first.endpoints).toBeGreaterThanOrEqual(1);
    // Fired again (a restart, a replay): the same message, nothing new queued.
    expect(await emit(app.url, 'budget-1:2026-11:90%')).toEqual({ ...first, endpoints: 0, duplicate: true });
    // Not subscribed: nothing for this endpoint.
    await emit(app.url, 'unpriced-1', 'usage.unpriced');

    await eventually(async () => expect(receiver.accepted('/once')).toHaveLength(1));
    const [got] = receiver.at('/once');
    expect(got!.verified).toBe(true);
    expect(got!.id).toBe(first.message_id);
    expect(JSON.parse(got!.body)).toMatchObject({ type: 'budget.threshold_crossed', data: budgetData('22.5000001') });
    // Only the content type, the user agent and the three webhook headers: never a credential.
    expect(got!.headers['authorization']).toBeUndefined();
    expect(got!.headers['cookie']).toBeUndefined();
    expect(got!.headers['content-type']).toBe('application/json');
    await eventually(async () => {
      const log = await deliveries(app.url, created.body.id);
      expect(log).toHaveLength(1);
      expect(log[0]).toMatchObject({ message_id: first.message_id, status: 'delivered' });
      expect(log[0]!.attempts).toMatchObject([{ attempt: 1, status_code: 200, ok: true, error: null }]);
    });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(receiver.at('/once')).toHaveLength(1);
  });

  it('retries a receiver that is down with the same webhook-id until it is back, and redelivers by hand', async () => {
    receiver.behave('/down', { status: 503 });
    const created = await register(app.url, receiver.url('/down'), { events: ['budget.exhausted'] });
    receiver.expectSecrets('/down', [created.body.secret]);
    const sent = await emit(app.url, 'budget-1:2026-11:100%', 'budget.exhausted');
    await eventually(async () => expect(receiver.at('/down').length).toBeGreaterThanOrEqual(3));
    receiver.behave('/down', { status: 204 });
    await eventually(async () => expect(receiver.accepted('/down')).toHaveLength(1));
    const all = receiver.at('/down');
    expect(new Set(all.map((request) => request.id))).toEqual(new Set([sent.message_id]));
    expect(all.every((request) => request.verified)).toBe(true);
    const [log] = await eventually(async () => {
      const found = await deliveries(app.url, created.body.id);
      expect(found[0]?.status).toBe('delivered');
      return found;
    });
    expect(log!.attempts.at(0)).toMatchObject({ attempt: 1, status_code: 503, ok: false, error: 'answered 503' });
    expect(log!.attempts.at(-1)).toMatchObject({ status_code: 204, ok: true });
    // The fault suite reads the consumer's outbox through its fault route: the same log.
    const faultLog = await call<Delivery[]>(
      app.url,
      'GET',
      `/_faults/webhook-deliveries?endpoint_id=${created.body.id}`,
    );
    expect(faultLog.body).toEqual(await deliveries(app.url, created.body.id));

    const again = await call(
      app.url,
      'POST',
      `/api/webhooks/${created.body.id}/deliveries/${sent.message_id}/redeliver`,
    );
    expect(again.status).toBe(202);
    await eventually(async () => expect(receiver.accepted('/down')).toHaveLength(2));
    expect(receiver.accepted('/down').map((request) => request.id)).toEqual([sent.message_id, sent.message_id]);
    const unknown = await call(app.url, 'POST', `/api/webhooks/${created.body.id}/deliveries/msg_nope/redeliver`);
    expect(unknown.status).toBe(404);
  });

  it('signs with both secrets during a rotation, each verifying alone', async () => {
    const created = await register(app.url, receiver.url('/rotated'), { events: ['call.cap_reached'] });
    const rotated = await call<{ id: string; secret: string; previous_secret_expires_at: string }>(
      app.url,
      'POST',
      `/api/webhooks/${created.body.id}/rotate-secret`,
    );
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(created.body.secret);
    const overlap = Date.parse(rotated.body.previous_secret_expires_at) - Date.now();
    expect(overlap).toBeGreaterThan(23 * 3_600_000);
    receiver.expectSecrets('/rotated', [created.body.secret, rotated.body.secret]);
    await emit(app.url, 'call-7:cap', 'call.cap_reached');
    await eventually(async () => expect(receiver.accepted('/rotated')).toHaveLength(1));
    const [got] = receiver.at('/rotated');
    expect(got!.verified).toBe(true);
    expect(got!.signature.split(' ')).toHaveLength(2);
    // A secret that was never the endpoint's verifies nothing: the check can fail.
    const stranger = new Webhook('whsec_' + Buffer.alloc(32, 7).toString('base64'));
    expect(() =>
      stranger.verify(got!.body, {
        'webhook-id': got!.id,
        'webhook-timestamp': got!.timestamp,
        'webhook-signature': got!.signature,
      }),
    ).toThrow();
  });

  it('never follows a redirect: a 3xx is a failed attempt, and the address it names gets nothing', async () => {
    const target = await new WebhookReceiver().listen();
    try {
      receiver.behave('/redirect', { location: target.url('/internal') });
      const created = await register(app.url, receiver.url('/redirect'), { events: ['budget.resolved'] });
      await emit(app.url, 'budget-1:2026-11:resolved', 'budget.resolved');
      await eventually(async () => {
        const [log] = await deliveries(app.url, created.body.id);
        expect(log?.attempts.length).toBeGreaterThanOrEqual(2);
        expect(log!.attempts[0]).toMatchObject({ status_code: 302, ok: false, error: 'answered 302' });
      });
      expect(target.received).toHaveLength(0);
    } finally {
      await target.close();
      const found = await call<{ id: string; url: string }[]>(app.url, 'GET', '/api/webhooks');
      const redirecting = found.body.find((endpoint) => endpoint.url === receiver.url('/redirect'));
      expect((await call(app.url, 'DELETE', `/api/webhooks/${redirecting!.id}`)).status).toBe(204);
      expect((await call(app.url, 'GET', `/api/webhooks/${redirecting!.id}`)).status).toBe(404);
    }
  });

  it('times a slow receiver out while another endpoint gets its delivery promptly', async () => {
    receiver.behave('/slow', { delayMs: 5_000 });
    const slow = await register(app.url, receiver.url('/slow'), { events: ['usage.unpriced'], user_id: 'tenant-slow' });
    const fast = await register(app.url, receiver.url('/fast'), { events: ['usage.unpriced'], user_id: 'tenant-slow' });
    receiver.expectSecrets('/fast', [fast.body.secret]);
    // Several messages to the slow one first: every one of them waits for its timeout.
    for (let n = 0; n < 6; n++) await emit(app.url, `slow-${n}`, 'usage.unpriced', 'tenant-slow');
    const started = Date.now();
    await emit(app.url, 'fast-0', 'usage.unpriced', 'tenant-slow');
    await eventually(async () => expect(receiver.accepted('/fast').length).toBeGreaterThanOrEqual(1), 10_000, 20);
    expect(Date.now() - started).toBeLessThan(1_500);
    await eventually(async () => {
      const log = await deliveries(app.url, slow.body.id);
      const timedOut = log.flatMap((delivery) => delivery.attempts).filter((attempt) => attempt.status_code === null);
      expect(timedOut.length).toBeGreaterThanOrEqual(1);
      expect(timedOut[0]!.error).toBe('no answer within 1500 ms');
      expect(timedOut[0]!.latency_ms).toBeGreaterThanOrEqual(1_400);
    });
  });

  it('sends usage.unpriced once for a tenant’s first unpriced provider and model, whatever the repeats and calls, and none for priced usage', async () => {
    const user = 'webhooks-unpriced';
    const created = await register(app.url, receiver.url('/unpriced'), { events: ['usage.unpriced'], user_id: user });
    receiver.expectSecrets('/unpriced', [created.body.secret]);
    const session = async () =>
      (await call<{ id: string }>(app.url, 'POST', '/api/sessions/', makeSessionBody({ user_id: user }))).body.id;
    const [first, second] = [await session(), await session()];
    const ago = (ms: number) => new Date(Date.now() - ms).toISOString();
    const usage = async (sessionId: string, body: Record<string, unknown>) => {
      const posted = makeUsageEventBody(sessionId, { user_id: user, ...body });
      expect((await call(app.url, 'POST', '/api/usage/events', posted)).status).toBe(201);
      return posted as { event_id: string; timestamp: string };
    };
    const unpriced = { provider: 'nobody-prices-this', model: 'voice-1' };
    const opening = await usage(first, { ...unpriced, timestamp: ago(60_000) });
    await usage(first, { ...unpriced, timestamp: ago(50_000) });
    await eventually(async () => expect(receiver.accepted('/unpriced')).toHaveLength(1));
    // Once the first is sent: the same kind in another call, priced usage, then a second unpriced model.
    await usage(second, { ...unpriced, timestamp: ago(40_000) });
    await usage(second, { timestamp: ago(30_000) });
    const otherModel = await usage(second, { ...unpriced, model: 'voice-2', timestamp: ago(20_000) });
    await eventually(async () => expect(receiver.accepted('/unpriced')).toHaveLength(2));
    const expected = (sessionId: string, model: string, posted: { event_id: string; timestamp: string }) => ({
      type: 'usage.unpriced',
      data: {
        user_id: user,
        provider: unpriced.provider,
        model,
        event_type: 'tts_characters',
        session_id: sessionId,
        event_id: posted.event_id,
        first_seen_at: posted.timestamp,
        hint: UNPRICED_HINT,
      },
    });
    const got = receiver.accepted('/unpriced');
    expect(got.every((request) => request.verified)).toBe(true);
    const bodies = got.map((request) => JSON.parse(request.body) as { type: string; data: unknown });
    expect(bodies.map(({ type, data }) => ({ type, data }))).toEqual([
      expected(first, 'voice-1', opening),
      expected(second, 'voice-2', otherModel),
    ]);
    // Nothing more on later rounds and deliveries.
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(receiver.at('/unpriced')).toHaveLength(2);
  });

  it('counts attempts and the outbox’s oldest pending age in /metrics, and /readyz does not depend on them', async () => {
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/webhook_attempts_total\{result="ok"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/webhook_attempts_total\{result="failed"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/webhook_deliveries_total\{status="delivered"[^}]*\} [1-9]/);
    expect(metrics).toMatch(/^webhook_outbox_oldest_pending_seconds(\{[^}]*\})? \d/m);
    const ready = await fetch(`${app.url}/readyz`, { headers: testAuthHeaders() });
    expect(Object.keys(((await ready.json()) as { checks: object }).checks)).not.toContain('webhooks');
  });
});

describe('registering webhooks without WEBHOOK_ALLOW_PRIVATE', () => {
  let app: CallmeterProcess;

  beforeAll(async () => {
    app = await startCallmeter({ DATA_DIR: isolate('webhooks-ssrf').dataDir, LOG_LEVEL: 'warn' });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
  });

  it.each([
    ['http://127.0.0.1:8080/hook', 'loopback'],
    ['http://10.1.2.3/hook', 'private'],
    ['http://169.254.169.254/latest/meta-data', 'linkLocal'],
    ['http://[::1]:9000/hook', 'loopback'],
    ['http://[::ffff:127.0.0.1]/hook', 'loopback'],
    ['http://[fd00::1]/hook', 'uniqueLocal'],
    ['http://0.0.0.0/hook', 'unspecified'],
    ['http://localhost:3000/hook', 'loopback'],
  ])('refuses %s with a 422 naming the %s range', async (url, range) => {
    const answer = await call<{ detail: { loc: string[]; msg: string; type: string }[] }>(
      app.url,
      'POST',
      '/api/webhooks',
      { url, events: ['budget.exhausted'] },
    );
    expect(answer.status).toBe(422);
    expect(answer.body.detail).toMatchObject([{ type: 'value_error', loc: ['body', 'url'] }]);
    expect(answer.body.detail[0]!.msg).toContain(range);
  });

  it('refuses an unknown event type, an empty list and a URL that is not http, as FastAPI would', async () => {
    const unknown = await call<{ detail: unknown[] }>(app.url, 'POST', '/api/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['budget.exhausted', 'budget.eaten'],
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.detail).toMatchObject([
      { type: 'literal_error', loc: ['body', 'events', 1], input: 'budget.eaten' },
    ]);
    const empty = await call<{ detail: unknown[] }>(app.url, 'POST', '/api/webhooks', { url: 'https://x', events: [] });
    expect(empty.body.detail).toMatchObject([{ type: 'too_short', loc: ['body', 'events'] }]);
    const ftp = await call<{ detail: { msg: string }[] }>(app.url, 'POST', '/api/webhooks', {
      url: 'ftp://93.184.215.14/',
      events: ['budget.exhausted'],
    });
    expect(ftp.status).toBe(422);
    expect(ftp.body.detail[0]!.msg).toContain('http or https');
  });

  it('accepts a public address, and answers another unknown webhook with a 404', async () => {
    const created = await call(app.url, 'POST', '/api/webhooks', {
      url: 'https://93.184.215.14/hook',
      events: ['budget.exhausted'],
    });
    expect(created.status).toBe(201);
    const missing = await call(app.url, 'GET', '/api/webhooks/6f1c1b40-0000-4000-8000-000000000000');
    expect(missing.status).toBe(404);
  });
});

describe('the outbox across a kill -9', () => {
  it('delivers the messages emitted before the process was killed once it runs again on the same data', async () => {
    const dataDir = isolate('webhooks-durable').dataDir;
    const env = { DATA_DIR: dataDir, LOG_LEVEL: 'warn', ...WEBHOOK_ENV };
    // Nothing listens on the port yet: every attempt before the kill is refused.
    const port = await freePort();
    const receiver = new WebhookReceiver();
    let app = await startCallmeter(env);
    try {
      const created = await register(app.url, `http://127.0.0.1:${port}/durable`, {
        events: ['budget.threshold_crossed'],
      });
      receiver.expectSecrets('/durable', [created.body.secret]);
      const ids: string[] = [];
      for (let n = 0; n < 3; n++) ids.push((await emit(app.url, `durable-${n}`)).message_id);
      await eventually(async () => {
        const log = await deliveries(app.url, created.body.id);
        expect(log.filter((delivery) => delivery.attempts.length > 0)).toHaveLength(3);
      });
      expect(await app.stop('SIGKILL')).toBeNull();
      await receiver.listen(port);
      app = await startCallmeter(env);
      await eventually(
        async () => expect(new Set(receiver.accepted('/durable').map((r) => r.id))).toEqual(new Set(ids)),
        30_000,
      );
      expect(receiver.at('/durable').every((request) => request.verified)).toBe(true);
      // Fired again after the restart: the same messages, none sent anew.
      for (let n = 0; n < 3; n++) expect((await emit(app.url, `durable-${n}`)).duplicate).toBe(true);
    } finally {
      await app.stop();
      await receiver.close();
    }
  }, 180_000);
});
