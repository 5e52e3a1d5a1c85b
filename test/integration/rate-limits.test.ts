import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RedisTokenBuckets } from '../../services/shared/auth/rate-limits.ts';
import { createRedis, type Redis } from '../../services/shared/redis/client.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { isolate, serviceEnv, testConfig } from '../support/harness.ts';

describe('the token buckets in the real Redis server', () => {
  const isolation = isolate('rate-limits');
  const config = testConfig(isolation);
  let redises: Redis[];

  beforeAll(async () => {
    redises = [createRedis(config.redis!), createRedis(config.redis!), createRedis(config.redis!)];
    await Promise.all(redises.map((redis) => redis.connect()));
  });

  afterAll(async () => {
    await Promise.all(redises.map((redis) => redis.quit()));
  });

  it('gives a bucket’s burst exactly once to 300 concurrent takes from three clients, then refills at its rate', async () => {
    const buckets = redises.map((redis) => new RedisTokenBuckets(redis, config.redis!.keyPrefix));
    const policy = { name: 'per-key', perSecond: 10, burst: 50 };
    const bucket = `key:${randomUUID()}`;
    const now = Date.now();
    const takes = await Promise.all(Array.from({ length: 300 }, (_, i) => buckets[i % 3]!.take(bucket, policy, now)));
    expect(takes.filter((take) => take.allowed)).toHaveLength(50);
    expect(Math.min(...takes.filter((take) => !take.allowed).map((take) => take.retryAfterMs))).toBe(100);
    const later = await Promise.all(Array.from({ length: 10 }, () => buckets[0]!.take(bucket, policy, now + 500)));
    expect(later.filter((take) => take.allowed)).toHaveLength(5);
  });
});

describe('rate limits of a process with AUTH_MODE=on, over Redis', () => {
  const adminKey = `bootstrap-${randomUUID()}`;
  let app: CallmeterProcess;

  beforeAll(async () => {
    const isolation = isolate('rate-limits-http');
    app = await startCallmeter(
      serviceEnv(isolation, {
        AUTH_MODE: 'on',
        ADMIN_API_KEY: adminKey,
        RATE_LIMIT_KEY_PER_SECOND: '2',
        RATE_LIMIT_KEY_BURST: '10',
      }),
    );
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('answers past the burst with 429, Retry-After and the RateLimit headers, per key', async () => {
    const created = await call(
      app.url,
      'POST',
      '/api/admin/keys',
      { scope: 'read' },
      { authorization: `Bearer ${adminKey}` },
    );
    const headers = { authorization: `Bearer ${created.body.key as string}`, 'x-user-id': 'tenant-a' };
    const answers = await Promise.all(
      Array.from({ length: 30 }, () => call(app.url, 'GET', '/api/costs/summary', undefined, headers)),
    );
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(10);
    const refused = answers.filter((answer) => answer.status === 429);
    expect(refused).toHaveLength(20);
    expect(refused[0]!.headers.get('retry-after')).toBe('1');
    expect(refused[0]!.headers.get('ratelimit-policy')).toMatch(/^"per-key";q=10;w=5/);
    expect(refused[0]!.headers.get('ratelimit')).toMatch(/^"per-key";r=0;t=\d+/);
    expect(refused[0]!.body).toEqual({ detail: expect.stringMatching(/^Rate limit exceeded \(per-key\)/) });
    // The admin's own bucket is untouched by the read key's.
    expect(
      (
        await call(app.url, 'GET', '/api/costs/summary', undefined, {
          authorization: `Bearer ${adminKey}`,
          'x-user-id': 'tenant-a',
        })
      ).status,
    ).toBe(200);
  });
});
