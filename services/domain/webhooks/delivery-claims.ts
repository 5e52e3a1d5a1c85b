import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * One attempt of one message at a time, across the processes that deliver: a claim is taken before the
 * attempt and released after its outcome is stored. In Redis (REDIS_URL) it is a key that expires by
 * itself, so a process killed mid-attempt holds the message up for `ttlMs` at most; in memory when this
 * process is the only one delivering.
 */
export interface DeliveryClaims {
  /** A token when claimed, null when another attempt holds the message. */
  claim(endpointId: string, messageId: string): Promise<string | null>;
  release(endpointId: string, messageId: string, token: string): Promise<void>;
}

/** The Redis key of one claim; the only key of the webhooks. */
export function deliveryClaimKey(prefix: string, endpointId: string, messageId: string): string {
  return `${prefix}webhook-claim:${endpointId}:${messageId}`;
}

export class MemoryDeliveryClaims implements DeliveryClaims {
  private readonly held = new Map<string, string>();

  async claim(endpointId: string, messageId: string): Promise<string | null> {
    const key = `${endpointId}:${messageId}`;
    if (this.held.has(key)) return null;
    const token = randomUUID();
    this.held.set(key, token);
    return token;
  }

  async release(endpointId: string, messageId: string, token: string): Promise<void> {
    const key = `${endpointId}:${messageId}`;
    if (this.held.get(key) === token) this.held.delete(key);
  }
}

/** Deletes the claim only while it is still this token's (an expired claim may be another's by now). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

export class RedisDeliveryClaims implements DeliveryClaims {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly ttlMs: number,
  ) {}

  async claim(endpointId: string, messageId: string): Promise<string | null> {
    const token = randomUUID();
    const taken = await this.redis.set(
      deliveryClaimKey(this.prefix, endpointId, messageId),
      token,
      'PX',
      this.ttlMs,
      'NX',
    );
    return taken === 'OK' ? token : null;
  }

  async release(endpointId: string, messageId: string, token: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, deliveryClaimKey(this.prefix, endpointId, messageId), token);
  }
}
