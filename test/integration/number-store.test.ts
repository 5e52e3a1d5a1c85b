import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeAssignRequest, numberStoreContract } from '../../services/ingest/telephony/number-store.contract.ts';
import { RedisNumberStore } from '../../services/ingest/telephony/redis-number-store.ts';
import { createRedis, type Redis } from '../../services/shared/redis/client.ts';
import { isolate, testConfig } from '../support/harness.ts';

const isolation = isolate('number_store');
const config = testConfig(isolation);
const connections: Redis[] = [];
let stores = 0;

async function connect(): Promise<Redis> {
  const redis = createRedis(config.redis!);
  await redis.connect();
  connections.push(redis);
  return redis;
}

/** Each store gets its own key prefix inside the file's, so tests never see each other's numbers. */
function prefix(): string {
  stores += 1;
  return `${config.redis!.keyPrefix}${stores}:`;
}

let shared: Redis;
beforeAll(async () => {
  shared = await connect();
});
afterAll(async () => {
  await Promise.all(connections.map((redis) => redis.quit()));
});

numberStoreContract('RedisNumberStore', (options) => new RedisNumberStore(shared, prefix(), options));

describe('RedisNumberStore on the real Redis', () => {
  it('keeps the numbers of a deployment from before scopes: found by number, released from the old key', async () => {
    const keyPrefix = prefix();
    const store = new RedisNumberStore(shared, keyPrefix);
    // The layout of the earlier release: the agent hash without a scope, the unscoped pointer, no holders' set.
    await shared.hset(`${keyPrefix}telephony-agent:old`, {
      agent_id: 'old',
      phone_number: '+15551239999',
      provider: 'twilio',
      assigned_at: '1',
    });
    await shared.set(`${keyPrefix}telephony-number:+15551239999`, 'old');
    expect(await store.holder('+15551239999')).toBe('old');
    expect(await store.holders('+15551239999')).toEqual(['old']);
    expect(await store.release('old')).toMatchObject({ kind: 'released' });
    expect(await shared.exists(`${keyPrefix}telephony-number:+15551239999`)).toBe(0);
    expect(await store.holders('+15551239999')).toEqual([]);
  });

  it('of agents racing for one number from several processes (own connections) exactly one gets it', async () => {
    const keyPrefix = prefix();
    const processes = await Promise.all(
      Array.from({ length: 4 }, async () => new RedisNumberStore(await connect(), keyPrefix)),
    );
    const outcomes = await Promise.all(
      Array.from({ length: 40 }, (_, i) => processes[i % 4]!.assign(makeAssignRequest({ agent_id: `racer-${i}` }))),
    );
    expect(outcomes.filter((o) => o.kind === 'assigned')).toHaveLength(1);
    expect(await shared.get(`${keyPrefix}telephony-number:+15551230001`)).toMatch(/^racer-\d+$/);
  });

  it('turns a Redis that does not answer into DEPENDENCY_UNAVAILABLE', async () => {
    const closed = createRedis(config.redis!);
    await closed.connect();
    await closed.quit();
    await expect(new RedisNumberStore(closed, prefix()).release('agent-1')).rejects.toMatchObject({
      code: 'DEPENDENCY_UNAVAILABLE',
    });
  });
});
