import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalRedis } from '../../infra/local/redis.ts';
import { startCallmeter } from '../support/callmeter-process.ts';
import { eventually, isolate, serviceEnv } from '../support/harness.ts';

describe('the callmeter process', () => {
  it('starts embedded with no external service, answers health, and keeps its data across a restart', async () => {
    const isolation = isolate('embedded');
    const env = { DATA_DIR: isolation.dataDir, LOG_LEVEL: 'info' };
    const first = await startCallmeter(env);
    const ready = await fetch(`${first.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { clickhouse: 'ok' } });
    expect(await (await fetch(`${first.url}/health`)).json()).toEqual({ status: 'ok', service: 'ingest+consumer+query' });
    expect(await first.stop('SIGTERM')).toBe(0);
    expect(first.output()).toContain('"msg":"shutdown_finished"');

    const second = await startCallmeter(env);
    expect(second.output()).not.toContain('clickhouse_migration_applied');
    expect(await second.stop('SIGTERM')).toBe(0);
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
      expect(ready).toEqual({ status: 'ready', service: 'ingest+consumer', checks: { clickhouse: 'ok', kafka: 'ok', redis: 'ok', consumer: 'ok' } });

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
