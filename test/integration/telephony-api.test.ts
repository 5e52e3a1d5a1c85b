import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { makeNumberAssignBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { drained } from '../support/drained.ts';
import { flushPrefix, isolate, serviceEnv, testConfig } from '../support/harness.ts';

describe('telephony numbers through real Kafka, Redis and the ClickHouse engine', () => {
  const isolation = isolate('telephony');
  const config = testConfig(isolation);
  const redis = new Redis(config.redis!.url);
  let app: CallmeterProcess;

  beforeAll(async () => {
    app = await startCallmeter(serviceEnv(isolation));
  });

  afterAll(async () => {
    await app?.stop();
    redis.disconnect();
  });

  it('assigns and releases as the replaced service did, and remembers numbers after Redis loses them', async () => {
    const assigned = await call(app.url, 'POST', '/api/telephony/numbers/assign', {
      agent_id: 'agent-1',
      phone_number: '15551230001',
      provider: 'twilio',
    });
    expect(assigned.text).toBe(
      '{"status":"assigned","phone_number":"+15551230001","agent_id":"agent-1","provider":"twilio"}',
    );
    const taken = await call(app.url, 'POST', '/api/telephony/numbers/assign', {
      agent_id: 'agent-2',
      phone_number: '+15551230001',
    });
    expect(taken.status).toBe(409);

    await drained(config, 'sessions');
    expect(await flushPrefix(redis, config.redis!.keyPrefix)).toBeGreaterThan(0);

    const stillTaken = await call(app.url, 'POST', '/api/telephony/numbers/assign', {
      agent_id: 'agent-2',
      phone_number: '+15551230001',
    });
    expect(stillTaken.status).toBe(409);
    const released = await call(app.url, 'POST', '/api/telephony/numbers/release', { agent_id: 'agent-1' });
    expect([released.status, released.text]).toEqual([200, '{"status":"released","phone_number":"+15551230001"}']);
    const again = await call(app.url, 'POST', '/api/telephony/numbers/release', { agent_id: 'agent-1' });
    expect([again.status, again.text]).toEqual([400, '{"detail":"Agent has no assigned phone number"}']);
    const never = await call(app.url, 'POST', '/api/telephony/numbers/release', { agent_id: 'agent-9' });
    expect([never.status, never.text]).toEqual([404, '{"detail":"Agent not found"}']);
    const wrongMethod = await call(app.url, 'GET', '/api/telephony/numbers/release');
    expect([wrongMethod.status, wrongMethod.headers.get('allow')]).toEqual([405, 'POST']);
  });

  it('answers GET of a held number with exactly agent_id, phone_number, provider and assigned_at, also after Redis loses it', async () => {
    const started = Date.now();
    const assigned = await call(
      app.url,
      'POST',
      '/api/telephony/numbers/assign',
      makeNumberAssignBody({ agent_id: 'agent-get', phone_number: ' 15551230077 ', provider: 'telnyx' }),
    );
    const answered = Date.now();
    expect(assigned.status).toBe(200);

    const held = await call<{ assigned_at: string }>(app.url, 'GET', '/api/telephony/numbers/agent-get');
    expect([held.status, held.headers.get('content-type')]).toEqual([200, 'application/json']);
    expect(Object.keys(held.body)).toEqual(['agent_id', 'phone_number', 'provider', 'assigned_at']);
    expect(held.body).toEqual({
      agent_id: 'agent-get',
      phone_number: '+15551230077',
      provider: 'telnyx',
      assigned_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect(Date.parse(held.body.assigned_at)).toBeGreaterThanOrEqual(started);
    expect(Date.parse(held.body.assigned_at)).toBeLessThanOrEqual(answered);

    await drained(config, 'sessions');
    expect(await flushPrefix(redis, config.redis!.keyPrefix)).toBeGreaterThan(0);
    // Read back from ClickHouse: the stored record carries the assignment's own time.
    const restored = await call(app.url, 'GET', '/api/telephony/numbers/agent-get');
    expect([restored.status, restored.text]).toEqual([200, held.text]);

    expect((await call(app.url, 'POST', '/api/telephony/numbers/release', { agent_id: 'agent-get' })).status).toBe(200);
    const released = await call(app.url, 'GET', '/api/telephony/numbers/agent-get');
    expect([released.status, released.text]).toEqual([
      200,
      '{"agent_id":"agent-get","phone_number":null,"provider":null,"assigned_at":null}',
    ]);
    const never = await call(app.url, 'GET', '/api/telephony/numbers/agent-never');
    expect([never.status, never.text]).toEqual([404, '{"detail":"Agent not found"}']);
  });
});
