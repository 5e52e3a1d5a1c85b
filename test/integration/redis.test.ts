import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, type Redis } from '../../services/shared/redis/client.ts';
import { isolate, testConfig } from '../support/harness.ts';

describe('the real Redis server', () => {
  const isolation = isolate('redis');
  const config = testConfig(isolation);
  let redis: Redis;

  beforeAll(async () => {
    redis = createRedis(config.redis!);
    await redis.connect();
  });

  afterAll(async () => {
    await redis.quit();
  });

  it('round-trips a hash and an atomic increment under the file’s key prefix', async () => {
    const key = `${config.redis!.keyPrefix}session:1`;
    await redis.hset(key, { status: 'ACTIVE', room_name: 'room-1' });
    const counted = await redis.multi().hincrby(key, 'events', 2).hincrby(key, 'events', 3).exec();
    expect(counted?.map(([error]) => error)).toEqual([null, null]);
    expect(await redis.hgetall(key)).toEqual({ status: 'ACTIVE', room_name: 'room-1', events: '5' });
    expect(await redis.info('server')).toMatch(/redis_version:/);
  });
});
