import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { makeSessionBody, makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { isolate } from '../support/harness.ts';
import { testAuthHeaders } from '../support/test-auth.ts';

const COMPAT_KEYS = [
  'id',
  'session_id',
  'user_id',
  'agent_id',
  'provider',
  'event_type',
  'quantity',
  'unit_cost',
  'total_cost',
  'created_at',
];
const EXTENSION_KEYS = ['occurred_at', 'model', 'input_tokens', 'output_tokens', 'cost', 'cost_source'];
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('POST /api/usage/events and /batch on the embedded process', () => {
  let app: CallmeterProcess;
  let session: string;
  let own: string;

  beforeAll(async () => {
    app = await startCallmeter({ DATA_DIR: isolate('batch').dataDir, LOG_LEVEL: 'warn' });
    session = (
      await call<{ id: string }>(app.url, 'POST', '/api/sessions/', { room_name: 'batch', user_id: 'tenant-b' })
    ).body.id;
    own = (
      await call<{ id: string }>(
        app.url,
        'POST',
        '/api/sessions/',
        makeSessionBody({ user_id: 'tenant-1', agent_id: 'agent-u' }),
      )
    ).body.id;
  });

  async function storedEvents(): Promise<number> {
    return (
      await call<{ event_count: number }>(app.url, 'GET', '/api/costs/summary', undefined, { 'x-user-id': 'tenant-1' })
    ).body.event_count;
  }

  afterAll(async () => {
    await app?.stop();
  });

  it('echoes Python ints, floats and NaN inputs of rejected items in Python JSON, beside the accepted ones', async () => {
    const id = randomUUID();
    const item = (quantity: string) =>
      `{"session_id":"${session}","user_id":"tenant-b","provider":"resemble","event_type":"tts_characters","quantity":${quantity}}`;
    const body = `[{"event_id":"${id}","session_id":"${session}","user_id":"tenant-b","provider":"resemble","event_type":"tts_characters","quantity":3},${item('-1')},${item('-123456789012345678901234567890')},${item('-2.5')},${item('NaN')}]`;
    const response = await fetch(`${app.url}/api/usage/events/batch`, {
      method: 'POST',
      headers: { ...testAuthHeaders(), 'content-type': 'application/json' },
      body,
    });
    const ge = (input: string) =>
      `{"type":"greater_than_equal","loc":["body",INDEX,"quantity"],"msg":"Input should be greater than or equal to 0","input":${input},"ctx":{"ge":0}}`;
    expect(response.status).toBe(200);
    expect(await response.text()).toBe(
      `[{"index":0,"id":"${id}","status":"accepted","cost":"0.00012","cost_source":"computed"},` +
        `{"index":1,"id":null,"status":"rejected","errors":[${ge('-1').replace('INDEX', '1')}]},` +
        `{"index":2,"id":null,"status":"rejected","errors":[${ge('-123456789012345678901234567890').replace('INDEX', '2')}]},` +
        `{"index":3,"id":null,"status":"rejected","errors":[${ge('-2.5').replace('INDEX', '3')}]},` +
        `{"index":4,"id":null,"status":"rejected","errors":[{"type":"finite_number","loc":["body",4,"quantity"],"msg":"Input should be a finite number","input":null}]}]`,
    );
    expect(
      (
        await call<{ event_count: number }>(app.url, 'GET', '/api/costs/summary', undefined, {
          'x-user-id': 'tenant-b',
        })
      ).body.event_count,
    ).toBe(1);
  });

  it('answers 201 with every key of the compat.md usage event, money as decimal strings', async () => {
    const occurred = new Date(Date.now() - 60_000).toISOString();
    const sent = makeUsageEventBody(own, {
      provider: ' Resemble ',
      unit_cost: '0.00004',
      total_cost: 0.00012,
      timestamp: occurred,
    });
    const started = Date.now();
    const answer = await call<Record<string, unknown>>(app.url, 'POST', '/api/usage/events', sent);
    expect(answer.status).toBe(201);
    expect(Object.keys(answer.body)).toEqual([...COMPAT_KEYS, ...EXTENSION_KEYS]);
    expect(answer.body).toEqual({
      id: sent.event_id,
      session_id: own,
      user_id: 'tenant-1',
      agent_id: 'agent-u',
      provider: 'resemble',
      event_type: 'tts_characters',
      quantity: '3',
      unit_cost: '0.00004',
      total_cost: '0.00012',
      created_at: expect.stringMatching(ISO_UTC),
      occurred_at: occurred,
      model: null,
      input_tokens: null,
      output_tokens: null,
      cost: '0.00012',
      cost_source: 'computed',
    });
    expect(Date.parse(String(answer.body.created_at))).toBeGreaterThanOrEqual(started);
    expect(Date.parse(String(answer.body.created_at))).toBeLessThanOrEqual(Date.now());
  });

  it('answers the priced cost where the worker sent none: total_cost, and an LLM unit_cost per 1,000 tokens as the replaced service showed it', async () => {
    const blended = await call<Record<string, unknown>>(
      app.url,
      'POST',
      '/api/usage/events',
      makeUsageEventBody(own, { provider: 'gemini', event_type: 'llm_tokens', quantity: 1200 }),
    );
    expect(blended.body).toMatchObject({
      quantity: '1200',
      unit_cost: '0.00086',
      total_cost: '0.001032',
      cost: '0.001032',
      cost_source: 'computed',
    });
    const minutes = await call<Record<string, unknown>>(
      app.url,
      'POST',
      '/api/usage/events',
      makeUsageEventBody(own, {
        provider: 'deepgram',
        event_type: 'stt_minutes',
        quantity: undefined,
        usage_data: { audio_duration_seconds: 90 },
      }),
    );
    expect(minutes.body).toMatchObject({
      quantity: '1.5',
      unit_cost: '0.0077',
      total_cost: '0.01155',
      cost: '0.01155',
      cost_source: 'computed',
    });
    const unknown = await call<Record<string, unknown>>(
      app.url,
      'POST',
      '/api/usage/events',
      makeUsageEventBody(own, { provider: 'acme-voice', quantity: 5 }),
    );
    expect(unknown.body).toMatchObject({ unit_cost: null, total_cost: null, cost: '0', cost_source: 'unpriced' });
  });

  it('refuses a timestamp more than 5 minutes ahead with a 422 at ["body","timestamp"], and accepts one 4 minutes ahead', async () => {
    const before = await storedEvents();
    const ahead = new Date(Date.now() + 6 * 60_000).toISOString();
    const refused = await call(app.url, 'POST', '/api/usage/events', makeUsageEventBody(own, { timestamp: ahead }));
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      detail: [
        {
          type: 'value_error',
          loc: ['body', 'timestamp'],
          msg: 'Value error, timestamp is more than 5 minutes in the future',
          input: ahead,
          ctx: { error: {} },
        },
      ],
    });
    const nearlyNow = await call(
      app.url,
      'POST',
      '/api/usage/events',
      makeUsageEventBody(own, { timestamp: new Date(Date.now() + 4 * 60_000).toISOString() }),
    );
    expect(nearlyNow.status).toBe(201);
    expect(await storedEvents()).toBe(before + 1);
  });

  it('refuses a user_id that is not the session\'s with a 422 at ["body","user_id"], storing nothing', async () => {
    const before = await storedEvents();
    const refused = await call(
      app.url,
      'POST',
      '/api/usage/events',
      makeUsageEventBody(own, { user_id: 'tenant-other' }),
    );
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      detail: [
        {
          type: 'value_error',
          loc: ['body', 'user_id'],
          msg: 'Value error, the session belongs to another user',
          input: 'tenant-other',
          ctx: { error: {} },
        },
      ],
    });
    expect(await storedEvents()).toBe(before);
    const summary = await call<{ event_count: number }>(app.url, 'GET', '/api/costs/summary', undefined, {
      'x-user-id': 'tenant-other',
    });
    expect(summary.body.event_count).toBe(0);
  });

  it('answers an unknown session_id with 404 Session not found, before checking the user or the timestamp', async () => {
    const before = await storedEvents();
    const future = new Date(Date.now() + 60 * 60_000).toISOString();
    for (const unknown of [randomUUID(), 'no-such-session']) {
      for (const overrides of [{}, { user_id: 'tenant-other', timestamp: future }]) {
        const answer = await call(app.url, 'POST', '/api/usage/events', makeUsageEventBody(unknown, overrides));
        expect([unknown, answer.status, answer.text]).toEqual([unknown, 404, '{"detail":"Session not found"}']);
      }
    }
    expect(await storedEvents()).toBe(before);
  });

  it('refuses a timestamp more than 35 days old with a 422 that points to corrections, in a batch item too, and takes one 34 days old', async () => {
    const before = await storedEvents();
    const old = new Date(Date.now() - 35 * 86_400_000 - 60_000).toISOString();
    const refused = await call(app.url, 'POST', '/api/usage/events', makeUsageEventBody(own, { timestamp: old }));
    const msg =
      'Value error, timestamp is more than 35 days in the past; usage that old is changed by a correction, not a new event';
    expect(refused.status).toBe(422);
    expect(refused.body).toEqual({
      detail: [{ type: 'value_error', loc: ['body', 'timestamp'], msg, input: old, ctx: { error: {} } }],
    });
    const ancient = makeUsageEventBody(own, { timestamp: '1850-01-01T00:00:00Z' });
    const batch = await call<{ status: string; errors?: { loc: unknown[]; msg: string }[] }[]>(
      app.url,
      'POST',
      '/api/usage/events/batch',
      [ancient, makeUsageEventBody(own, { timestamp: new Date(Date.now() - 34 * 86_400_000).toISOString() })],
    );
    expect(batch.body.map((item) => item.status)).toEqual(['rejected', 'accepted']);
    expect(batch.body[0]!.errors).toMatchObject([{ loc: ['body', 0, 'timestamp'], msg }]);
    expect(await storedEvents()).toBe(before + 1);
  });

  it('answers 409 for usage without a timestamp arriving more than an hour after its session ended, rejects it as a batch item, and takes it within the hour or when its timestamp lies inside the call', async () => {
    const endedAt = async (msAgo: number) => {
      const id = (
        await call<{ id: string }>(app.url, 'POST', '/api/sessions/', makeSessionBody({ user_id: 'tenant-1' }))
      ).body.id;
      const ended = await call(app.url, 'PATCH', `/api/sessions/${id}`, {
        status: 'COMPLETED',
        ended_at: new Date(Date.now() - msAgo).toISOString(),
      });
      expect(ended.status).toBe(200);
      return id;
    };
    const before = await storedEvents();
    const closed = await endedAt(61 * 60_000);
    const refused = await call<{ detail: string }>(app.url, 'POST', '/api/usage/events', makeUsageEventBody(closed));
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(
      /^Session ended at \S+Z; usage at \S+Z is more than 3600 seconds after its end: it takes no more usage$/,
    );
    const batch = await call<{ status: string; errors?: { loc: unknown[] }[] }[]>(
      app.url,
      'POST',
      '/api/usage/events/batch',
      [makeUsageEventBody(closed)],
    );
    expect(batch.body).toMatchObject([{ status: 'rejected', errors: [{ loc: ['body', 0, 'session_id'] }] }]);
    const recent = await endedAt(59 * 60_000);
    expect((await call(app.url, 'POST', '/api/usage/events', makeUsageEventBody(recent))).status).toBe(201);
    const spooled = makeUsageEventBody(closed, { timestamp: new Date(Date.now() - 62 * 60_000).toISOString() });
    expect((await call(app.url, 'POST', '/api/usage/events', spooled)).status).toBe(201);
    expect(await storedEvents()).toBe(before + 2);
  });
});
