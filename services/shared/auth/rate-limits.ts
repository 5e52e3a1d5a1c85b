import { AppError } from '../errors.ts';
import type { Redis } from '../redis/client.ts';
import { LuaScript } from '../redis/redis-script.ts';

/** A token bucket: `burst` tokens at most, refilled at `perSecond`; each request takes one. */
export interface BucketPolicy {
  readonly name: string;
  readonly perSecond: number;
  readonly burst: number;
}

export interface Take {
  readonly allowed: boolean;
  /** Whole tokens left after this request. */
  readonly remaining: number;
  /** Milliseconds until one token is back (a refused request may retry then). */
  readonly retryAfterMs: number;
}

export interface TokenBuckets {
  take(bucket: string, policy: BucketPolicy, nowMs: number): Promise<Take>;
}

/**
 * One bucket's refill and take, as pure arithmetic: the memory buckets run it, and the Lua script
 * below is the same steps on Redis's copy.
 */
export function takeToken(
  state: { tokens: number; at: number } | undefined,
  policy: BucketPolicy,
  nowMs: number,
): { next: { tokens: number; at: number }; take: Take } {
  const elapsed = state === undefined ? 0 : Math.max(0, nowMs - state.at);
  const tokens = Math.min(policy.burst, (state?.tokens ?? policy.burst) + (elapsed * policy.perSecond) / 1000);
  const allowed = tokens >= 1;
  const left = allowed ? tokens - 1 : tokens;
  return {
    next: { tokens: left, at: nowMs },
    take: {
      allowed,
      remaining: Math.floor(left),
      retryAfterMs: allowed ? 0 : Math.ceil(((1 - left) * 1000) / policy.perSecond),
    },
  };
}

/** The embedded mode's buckets, in this process's memory (idle full buckets are dropped). */
export class MemoryTokenBuckets implements TokenBuckets {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  async take(bucket: string, policy: BucketPolicy, nowMs: number): Promise<Take> {
    const { next, take } = takeToken(this.buckets.get(bucket), policy, nowMs);
    this.buckets.set(bucket, next);
    if (this.buckets.size > 100_000) this.dropFull(policy, nowMs);
    return take;
  }

  private dropFull(policy: BucketPolicy, nowMs: number): void {
    for (const [key, state] of this.buckets) {
      if (state.tokens + ((nowMs - state.at) * policy.perSecond) / 1000 >= policy.burst) this.buckets.delete(key);
    }
  }
}

// Written here because no well-kept Node library keeps a token bucket in Redis: rate-limiter-flexible,
// the maintained one, counts fixed windows. One atomic script per request: refill, take, store, expire.
const takeScript = new LuaScript(
  'callmeterTakeToken',
  1,
  `local state = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local now = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local burst = tonumber(ARGV[3])
local tokens = burst
if state[1] then
  local elapsed = math.max(0, now - tonumber(state[2]))
  tokens = math.min(burst, tonumber(state[1]) + elapsed * rate / 1000)
end
local allowed = 0
if tokens >= 1 then
  tokens = tokens - 1
  allowed = 1
end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'at', tostring(now))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst * 1000 / rate) + 1000)
return {allowed, tostring(tokens)}`,
);

/** Buckets shared by every process through Redis. The time is the caller's clock, as in memory. */
export class RedisTokenBuckets implements TokenBuckets {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async take(bucket: string, policy: BucketPolicy, nowMs: number): Promise<Take> {
    const [allowed, tokens] = (await takeScript.run(
      this.redis,
      [`${this.prefix}ratelimit:${bucket}`],
      [nowMs, policy.perSecond, policy.burst],
    )) as [number, string];
    const left = Number(tokens);
    return {
      allowed: allowed === 1,
      remaining: Math.floor(left),
      retryAfterMs: allowed === 1 ? 0 : Math.ceil(((1 - left) * 1000) / policy.perSecond),
    };
  }
}

export interface RateLimits {
  readonly perKey: BucketPolicy | null;
  readonly perTenant: BucketPolicy | null;
}

/**
 * Takes a token from the caller's key bucket and its tenant's; past either, a 429 with Retry-After.
 * The answer's headers follow the IETF draft (draft-ietf-httpapi-ratelimit-headers): `RateLimit-Policy`
 * names each policy's quota and window, `RateLimit` the tightest one's remaining tokens and reset.
 */
export async function limitRequest(
  buckets: TokenBuckets,
  limits: RateLimits,
  callerId: string,
  tenant: string | null,
  nowMs: number,
): Promise<Record<string, string>> {
  const checks = [
    ...(limits.perKey === null ? [] : [{ policy: limits.perKey, bucket: `key:${callerId}` }]),
    ...(limits.perTenant === null || tenant === null ? [] : [{ policy: limits.perTenant, bucket: `tenant:${tenant}` }]),
  ];
  if (checks.length === 0) return {};
  const taken = await Promise.all(
    checks.map(async (check) => ({ ...check, take: await buckets.take(check.bucket, check.policy, nowMs) })),
  );
  const headers = {
    'RateLimit-Policy': taken
      .map(
        ({ policy }) =>
          `"${policy.name}";q=${policy.burst};w=${Math.max(1, Math.ceil(policy.burst / policy.perSecond))}`,
      )
      .join(', '),
    RateLimit: taken
      .map(
        ({ policy, take }) =>
          `"${policy.name}";r=${take.remaining};t=${Math.ceil(Math.max(take.retryAfterMs, ((policy.burst - take.remaining) * 1000) / policy.perSecond) / 1000)}`,
      )
      .join(', '),
  };
  const refused = taken.filter(({ take }) => !take.allowed);
  if (refused.length > 0) {
    const retryAfterS = Math.max(1, ...refused.map(({ take }) => Math.ceil(take.retryAfterMs / 1000)));
    throw AppError.of(
      'TOO_MANY_REQUESTS',
      `Rate limit exceeded (${refused.map(({ policy }) => policy.name).join(', ')}); retry after ${retryAfterS} s`,
      {
        headers: { ...headers, 'Retry-After': String(retryAfterS) },
      },
    );
  }
  return headers;
}

/**
 * Failed authentications per source address, in this process's memory. A credential known to be
 * refused takes a token (`take`); one about to be checked reserves one (`reserve`), so that checks
 * still in flight count against the budget too, and `settle` gives it back when it was good. A good
 * credential is never refused for the checks in flight beside it: when they hold every token left, it
 * waits for one of them to settle. Kept per process rather than in Redis so that the check costs no
 * round trip on the path it guards. The buckets' arithmetic is `takeToken`'s, for the reason given at
 * the Redis script above.
 */
export class FailedAuthLimiter {
  private readonly addresses = new Map<string, { tokens: number; at: number }>();
  /** Per address, the checks holding a reserved token, and the reservations waiting for one of them to settle. */
  private readonly checking = new Map<string, { count: number; waiting: (() => void)[] }>();

  constructor(private readonly policy: BucketPolicy | null) {}

  /** Takes one try from the address: null when taken, else the milliseconds until one is back. */
  take(address: string, nowMs: number): number | null {
    if (this.policy === null) return null;
    const { next, take } = takeToken(this.addresses.get(address), this.policy, nowMs);
    this.addresses.set(address, next);
    if (this.addresses.size > 100_000) this.dropFull(nowMs);
    return take.allowed ? null : take.retryAfterMs;
  }

  /**
   * Reserves a try for a check about to run: null when reserved (`settle` it once the check ends), else
   * the milliseconds until one is back. While checks of the address are in flight, an empty bucket may
   * be theirs alone, so the reservation waits for them rather than being refused.
   */
  async reserve(address: string, now: () => number): Promise<number | null> {
    for (;;) {
      const retryAfterMs = this.take(address, now());
      const inFlight = this.checking.get(address);
      if (retryAfterMs === null) {
        if (this.policy === null) return null;
        if (inFlight === undefined) this.checking.set(address, { count: 1, waiting: [] });
        else inFlight.count += 1;
        return null;
      }
      if (inFlight === undefined) return retryAfterMs;
      await new Promise<void>((resolve) => inFlight.waiting.push(resolve));
    }
  }

  /** A reserved check has ended: its try is kept when the credential failed, given back otherwise. */
  settle(address: string, failed: boolean): void {
    const state = this.addresses.get(address);
    if (!failed && this.policy !== null && state !== undefined)
      state.tokens = Math.min(this.policy.burst, state.tokens + 1);
    const inFlight = this.checking.get(address);
    if (inFlight === undefined) return;
    inFlight.count -= 1;
    if (inFlight.count === 0) this.checking.delete(address);
    for (const wake of inFlight.waiting.splice(0)) wake();
  }

  private dropFull(nowMs: number): void {
    const policy = this.policy!;
    for (const [key, state] of this.addresses) {
      if (state.tokens + ((nowMs - state.at) * policy.perSecond) / 1000 >= policy.burst) this.addresses.delete(key);
    }
  }
}
