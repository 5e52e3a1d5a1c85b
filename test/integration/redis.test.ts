import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedis, type Redis } from '../../services/shared/redis/client.ts';
import { LuaScript } from '../../services/shared/redis/redis-script.ts';
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

describe('a Lua command on an auto-pipelining client', () => {
  it('runs when first issued in the same turn as other commands, and the process lives on', async () => {
    const isolation = isolate('redis-script');
    const config = testConfig(isolation);
    const redis = createRedis(config.redis!);
    await redis.connect();
    try {
      const script = new LuaScript('callmeterTestEcho', 1, "return redis.call('INCRBY', KEYS[1], ARGV[1])");
      const key = `${config.redis!.keyPrefix}counter`;
      // The GET opens an auto-pipeline before the script's command is defined on this client (the
      // scripts are then sent apart, so the GET may see any count: only the scripts' answers are checked).
      const [, ...counted] = await Promise.all([
        redis.get(key),
        ...Array.from({ length: 20 }, () => script.run(redis, [key], [1])),
      ]);
      expect(counted.map(Number).sort((a, b) => a - b)).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    } finally {
      await redis.quit();
    }
  });
});
