import { describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { limitRequest, MemoryTokenBuckets, takeToken, type BucketPolicy } from './rate-limits.ts';

const policy: BucketPolicy = { name: 'per-key', perSecond: 2, burst: 3 };

describe('the token bucket', () => {
  it('gives the burst at once, then one token per 1/rate seconds', () => {
    let state: { tokens: number; at: number } | undefined;
    const takes = [0, 0, 0, 0, 499, 500, 500].map((at) => {
      const { next, take } = takeToken(state, policy, at);
      state = next;
      return take.allowed;
    });
    expect(takes).toEqual([true, true, true, false, false, true, false]);
  });

  it('tells a refused caller when one token is back', () => {
    const first = takeToken(undefined, { name: 'x', perSecond: 4, burst: 1 }, 0);
    const refused = takeToken(first.next, { name: 'x', perSecond: 4, burst: 1 }, 100);
    expect(refused.take).toEqual({ allowed: false, remaining: 0, retryAfterMs: 150 });
  });

  it('never holds more than the burst, however long it idled', () => {
    const { next } = takeToken({ tokens: 0, at: 0 }, policy, 3_600_000);
    expect(next.tokens).toBe(2);
  });
});

describe('limitRequest', () => {
  it('answers the draft RateLimit headers, and past a bucket a 429 with Retry-After naming it', async () => {
    const buckets = new MemoryTokenBuckets();
    const limits = {
      perKey: { name: 'per-key', perSecond: 1, burst: 2 },
      perTenant: { name: 'per-tenant', perSecond: 10, burst: 100 },
    };
    const headers = await limitRequest(buckets, limits, 'key-1', 'tenant-a', 0);
    expect(headers).toEqual({
      'RateLimit-Policy': '"per-key";q=2;w=2, "per-tenant";q=100;w=10',
      RateLimit: '"per-key";r=1;t=1, "per-tenant";r=99;t=1',
    });
    await limitRequest(buckets, limits, 'key-1', 'tenant-a', 0);
    const refused = await limitRequest(buckets, limits, 'key-1', 'tenant-a', 0).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(AppError);
    expect([
      (refused as AppError).code,
      (refused as AppError).headers['Retry-After'],
      (refused as AppError).message,
    ]).toEqual(['TOO_MANY_REQUESTS', '1', 'Rate limit exceeded (per-key); retry after 1 s']);
    // Another key of the same tenant still has its own tokens; the tenant's bucket is shared.
    await expect(limitRequest(buckets, limits, 'key-2', 'tenant-a', 0)).resolves.toMatchObject({
      RateLimit: '"per-key";r=1;t=1, "per-tenant";r=96;t=1',
    });
  });

  it('limits nothing when both limits are off', async () => {
    await expect(
      limitRequest(new MemoryTokenBuckets(), { perKey: null, perTenant: null }, 'k', 't', 0),
    ).resolves.toEqual({});
  });
});
