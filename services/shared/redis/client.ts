import { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { LuaScript } from './redis-script.ts';

export type { Redis };
export type RedisConfig = NonNullable<Config['redis']>;

/**
 * Connects lazily so that building the app never touches the network; `connect()` is explicit.
 * Auto-pipelining sends the commands issued in one event-loop turn together: concurrent requests'
 * session look-ups share a round trip.
 */
export function createRedis(config: RedisConfig): Redis {
  const redis = new Redis(config.url, {
    lazyConnect: true,
    enableAutoPipelining: true,
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    retryStrategy: (attempt) => Math.min(50 * 2 ** attempt, 2_000),
  });
  // Before the first command: every auto-pipeline then carries the scripts (redis-script.ts).
  LuaScript.defineAll(redis);
  return redis;
}
