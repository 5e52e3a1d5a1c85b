import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalRedis } from '../../infra/local/redis.ts';
import { call } from '../support/api.ts';
import { makeNumberAssignBody, makeSessionBody, makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter } from '../support/callmeter-process.ts';
import { eventually, isolate, serviceEnv } from '../support/harness.ts';

type SessionBody = { id: string; status: string; session_data: Record<string, unknown> };

const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

describe('the callmeter process', () => {
  it('starts embedded with no external service, answers health, and keeps its data across a restart', async () => {
    const isolation = isolate('embedded');
    const env = { DATA_DIR: isolation.dataDir, LOG_LEVEL: 'info' };
    const first = await startCallmeter(env);
    const ready = await fetch(`${first.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { clickhouse: 'ok' } });
    expect(await (await fetch(`${first.url}/health`)).json()).toEqual({
      status: 'ok',
      service: 'ingest+consumer+query',
    });
    const created = await call<SessionBody>(
      first.url,
      'POST',
      '/api/sessions/',
      makeSessionBody({ user_id: 'u-embedded', agent_id: 'agent-embedded', session_data: { lang: 'en' } }),
    );
    expect(created.status).toBe(201);
    const assignStarted = Date.now();
    const assigned = await call(
      first.url,
      'POST',
      '/api/telephony/numbers/assign',
      makeNumberAssignBody({ agent_id: 'agent-embedded', phone_number: '15551230042' }),
    );
    const assignAnswered = Date.now();
    expect([assigned.status, assigned.body]).toEqual([
      200,
      { status: 'assigned', phone_number: '+15551230042', agent_id: 'agent-embedded', provider: 'twilio' },
    ]);
    const heldNumber = {
      agent_id: 'agent-embedded',
      phone_number: '+15551230042',
      provider: 'twilio',
      assigned_at: expect.stringMatching(ISO_UTC),
    };
    const held = await call<{ assigned_at: string }>(first.url, 'GET', '/api/telephony/numbers/agent-embedded');
    expect([held.status, held.body]).toEqual([200, heldNumber]);
    expect(Date.parse(held.body.assigned_at)).toBeGreaterThanOrEqual(assignStarted);
    expect(Date.parse(held.body.assigned_at)).toBeLessThanOrEqual(assignAnswered);
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toContain('"msg":"shutdown_finished"');

    const second = await startCallmeter(env);
    try {
      expect(second.output()).not.toContain('clickhouse_migration_applied');
      // Closed cleanly before: nothing to rebuild.
      expect(second.output()).not.toContain('clickhouse_views_rebuilt');
      // The memory stores start empty: everything below comes back from the engine's files.
      const read = await call<SessionBody>(second.url, 'GET', `/api/sessions/${created.body.id}`);
      expect([read.status, read.text]).toEqual([200, created.text]);
      const patched = await call<SessionBody>(second.url, 'PATCH', `/api/sessions/${created.body.id}`, {
        status: 'COMPLETED',
        metadata: { topic: 'billing' },
      });
      expect([patched.status, patched.body.status, patched.body.session_data]).toEqual([
        200,
        'COMPLETED',
        { lang: 'en', topic: 'billing' },
      ]);
      expect((await call<SessionBody>(second.url, 'GET', `/api/sessions/${created.body.id}`)).body.status).toBe(
        'COMPLETED',
      );

      // The stored record carries the assignment's own time, so the number reads back unchanged.
      const number = await call(second.url, 'GET', '/api/telephony/numbers/agent-embedded');
      expect([number.status, number.text]).toEqual([200, held.text]);
      const taken = await call(
        second.url,
        'POST',
        '/api/telephony/numbers/assign',
        makeNumberAssignBody({ phone_number: '+15551230042' }),
      );
      expect(taken.status).toBe(409);
      const released = await call(second.url, 'POST', '/api/telephony/numbers/release', { agent_id: 'agent-embedded' });
      expect([released.status, released.text]).toEqual([200, '{"status":"released","phone_number":"+15551230042"}']);
      const after = await call(second.url, 'GET', '/api/telephony/numbers/agent-embedded');
      expect(after.body).toEqual({ agent_id: 'agent-embedded', phone_number: null, provider: null, assigned_at: null });
      expect(await second.stop('SIGTERM')).toBe(0);
    } finally {
      await second.stop('SIGKILL');
    }
  });

  it('rebuilds its materialized views after it was killed, and its costs read the same', async () => {
    const env = { DATA_DIR: isolate('embedded-killed').dataDir, LOG_LEVEL: 'info' };
    const first = await startCallmeter(env);
    const created = await call<SessionBody>(
      first.url,
      'POST',
      '/api/sessions/',
      makeSessionBody({ user_id: 'u-killed', agent_id: 'agent-killed' }),
    );
    for (let i = 0; i < 5; i += 1)
      expect(
        (
          await call(
            first.url,
            'POST',
            '/api/usage/events',
            makeUsageEventBody(created.body.id, { user_id: 'u-killed' }),
          )
        ).status,
      ).toBe(201);
    const summary = async (url: string) =>
      (await call<Record<string, unknown>>(url, 'GET', '/api/costs/summary', undefined, { 'x-user-id': 'u-killed' }))
        .body;
    const before = await summary(first.url);
    expect(before.event_count).toBe(5);
    await first.stop('SIGKILL');

    const second = await startCallmeter(env);
    try {
      await eventually(async () => expect(second.output()).toContain('"msg":"clickhouse_views_rebuilt"'), 10_000);
      const after = await summary(second.url);
      expect({ ...after, as_of: null }).toEqual({ ...before, as_of: null });
      expect(await second.stop('SIGTERM')).toBe(0);
    } finally {
      await second.stop('SIGKILL');
    }
    // Repaired and closed cleanly: the next start has nothing to rebuild.
    const third = await startCallmeter(env);
    try {
      expect(third.output()).not.toContain('clickhouse_views_rebuilt');
      expect((await summary(third.url)).event_count).toBe(5);
    } finally {
      await third.stop('SIGKILL');
    }
  });

  it('answers unknown routes with the FastAPI 404 body and counts requests in /metrics', async () => {
    const app = await startCallmeter({ DATA_DIR: isolate('routes').dataDir });
    const missing = await fetch(`${app.url}/api/nothing-here`);
    expect(missing.status).toBe(404);
    expect(missing.headers.get('content-type')).toBe('application/json');
    expect(await missing.text()).toBe('{"detail":"Not Found"}');
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/http_requests_total\{method="GET",route="unmatched",status="404"[^}]*\} 1/);
    expect(metrics).toContain('process_resident_memory_bytes');
    // The embedded engine's own accounting, read from its system tables at the scrape.
    const gauge = (series: string) =>
      Number(new RegExp(`^${series.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(metrics)?.[1]);
    expect(gauge('callmeter_clickhouse_engine_memory_bytes{part="tracked"}')).toBeGreaterThan(0);
    expect(gauge('callmeter_clickhouse_engine_memory_bytes{part="mark_cache"}')).toBeGreaterThanOrEqual(0);
    expect(gauge('callmeter_clickhouse_engine_memory_bytes{part="primary_keys"}')).toBeGreaterThan(0);
    expect(gauge('callmeter_clickhouse_engine_parts{state="active"}')).toBeGreaterThan(0);
    expect(gauge('callmeter_clickhouse_engine_parts{state="outdated"}')).toBeGreaterThanOrEqual(0);
    await app.stop();
  });

  describe('against real Kafka and Redis', () => {
    const isolation = isolate('process');
    const stopLater: (() => Promise<unknown>)[] = [];
    afterAll(async () => {
      for (const stop of stopLater.reverse()) await stop();
    });

    it('is ready only while every dependency answers, naming the one that is down', async () => {
      const redis = await LocalRedis.create(path.join(isolation.dataDir, 'own-redis'));
      await redis.start();
      stopLater.push(() => redis.stop());
      const app = await startCallmeter(serviceEnv(isolation, { REDIS_URL: redis.url, SERVICES: 'ingest,consumer' }));
      stopLater.push(() => app.stop());

      // Health answers at once; readiness waits for the consumer to join its group.
      const ready = await eventually(async () => {
        const response = await fetch(`${app.url}/readyz`);
        expect(response.status).toBe(200);
        return response.json();
      });
      expect(ready).toEqual({
        status: 'ready',
        service: 'ingest+consumer',
        checks: { clickhouse: 'ok', kafka: 'ok', redis: 'ok', consumer: 'ok' },
      });

      await redis.stop();
      const down = await eventually(async () => {
        const response = await fetch(`${app.url}/readyz`);
        expect(response.status).toBe(503);
        return response.json();
      });
      expect(down).toMatchObject({ detail: 'redis unavailable', checks: { clickhouse: 'ok', kafka: 'ok' } });

      await redis.start();
      await eventually(async () => expect((await fetch(`${app.url}/readyz`)).status).toBe(200));
      expect(await app.stop('SIGTERM')).toBe(0);
    });
  });
});
