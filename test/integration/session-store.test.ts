import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sessionMutation } from '../../services/ingest/sessions/session-commands.ts';
import { makeSession, T0 } from '../../services/ingest/sessions/session.fixtures.ts';
import { sessionStoreContract } from '../../services/ingest/sessions/session-store.contract.ts';
import { RedisSessionStore } from '../../services/ingest/sessions/redis-session-store.ts';
import { createRedis, type Redis } from '../../services/shared/redis/client.ts';
import { isolate, testConfig } from '../support/harness.ts';

const isolation = isolate('session_store');
const config = testConfig(isolation);
const connections: Redis[] = [];
let stores = 0;

async function connect(): Promise<Redis> {
  const redis = createRedis(config.redis!);
  await redis.connect();
  connections.push(redis);
  return redis;
}

/** Each store gets its own key prefix inside the file's, so tests never see each other's sessions. */
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

sessionStoreContract('RedisSessionStore', (options) => new RedisSessionStore(shared, prefix(), options));

describe('RedisSessionStore on the real Redis', () => {
  it('keeps answering by room the sessions a deployment created before rooms were kept per tenant', async () => {
    const keyPrefix = prefix();
    const store = new RedisSessionStore(shared, keyPrefix);
    const session = makeSession({ user_id: 'before', room_name: 'legacy-room' });
    await store.create(session);
    // The layout of the earlier release: only the room's pointer, no tenant's pointer.
    await shared.del(`${keyPrefix}tenant-room:before:legacy-room`);
    expect(await shared.exists(`${keyPrefix}session-room:legacy-room`)).toBe(1);
    expect(await store.getByRoom('legacy-room', 'someone-else')).toBeNull();
    expect(await store.getByRoom('legacy-room', 'before')).toEqual(session);
    // Adopted: the tenant's pointer now exists, with the session's lifetime, and updates keep it.
    const ttl = await shared.pttl(`${keyPrefix}tenant-room:before:legacy-room`);
    expect(ttl).toBeGreaterThan(0);
    await store.update(session.id, sessionMutation({ status: 'COMPLETED' }, T0 + 1));
    expect(await shared.pttl(`${keyPrefix}tenant-room:before:legacy-room`)).toBeGreaterThan(ttl);
    expect((await store.getByRoom('legacy-room', 'before'))?.status).toBe('COMPLETED');
  });

  it('runs its scripts again after the server forgot them (SCRIPT FLUSH, as after a restart)', async () => {
    const store = new RedisSessionStore(shared, prefix());
    const session = makeSession();
    await store.create(session);
    await shared.script('FLUSH');
    const outcome = await store.update(session.id, sessionMutation({ metadata: { after_flush: true } }, T0 + 1));
    expect(outcome.kind).toBe('changed');
    expect((await store.get(session.id))?.session_data).toMatchObject({ after_flush: true });
  });

  it('loses no update when several processes (own connections) race on one session', async () => {
    const keyPrefix = prefix();
    const processes = await Promise.all(
      Array.from({ length: 5 }, async () => new RedisSessionStore(await connect(), keyPrefix)),
    );
    const session = makeSession();
    await processes[0]!.create(session);
    const updates = Array.from({ length: 60 }, (_, i) =>
      processes[i % 5]!.update(session.id, sessionMutation({ metadata: { [`k${i}`]: i } }, T0 + i)),
    );
    await Promise.all(updates);
    const stored = await processes[0]!.get(session.id);
    expect(Object.keys(stored?.session_data ?? {})).toHaveLength(60);
    expect(stored?.version).toBe(61);
  });

  it('retries an update that lost the compare-and-set, on top of the write that won', async () => {
    const keyPrefix = prefix();
    const store = new RedisSessionStore(shared, keyPrefix);
    const session = makeSession();
    await store.create(session);
    let calls = 0;
    const outcome = await store.update(session.id, (current) => {
      calls += 1;
      // Queued on the same connection before the compare-and-set: another process's write wins.
      if (calls === 1)
        void shared.hset(
          `${keyPrefix}session:${session.id}`,
          'version',
          '2',
          'session',
          JSON.stringify({ ...current, session_data: { foreign: true }, version: 2 }),
        );
      return sessionMutation({ metadata: { mine: true } }, T0 + 1)(current);
    });
    expect(calls).toBe(2);
    expect(outcome).toMatchObject({
      kind: 'changed',
      after: { session_data: { foreign: true, mine: true }, version: 3 },
    });
  });

  it('gives up with DEPENDENCY_UNAVAILABLE when every compare-and-set is lost', async () => {
    const keyPrefix = prefix();
    const store = new RedisSessionStore(shared, keyPrefix, { maxAttempts: 3 });
    const session = makeSession();
    await store.create(session);
    const always = (current: typeof session) => {
      void shared.hincrby(`${keyPrefix}session:${session.id}`, 'version', 1);
      return sessionMutation({ metadata: { k: 1 } }, T0 + 1)(current);
    };
    await expect(store.update(session.id, always)).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });

  it('gives a live session and its room pointer the idle TTL, and an ended one the ended TTL', async () => {
    const keyPrefix = prefix();
    const store = new RedisSessionStore(shared, keyPrefix, { endedRetentionMs: 60_000, idleRetentionMs: 600_000 });
    const session = makeSession({ room_name: 'room-ttl' });
    const keys = [`${keyPrefix}session:${session.id}`, `${keyPrefix}session-room:room-ttl`];
    await store.create(session);
    for (const key of keys) expect(await shared.pttl(key)).toBeGreaterThan(590_000);
    await store.update(session.id, sessionMutation({ status: 'COMPLETED' }, T0 + 1));
    for (const key of keys) expect(await shared.pttl(key)).toSatisfy((ttl: number) => ttl > 50_000 && ttl <= 60_000);
  });

  it('turns a Redis that does not answer into DEPENDENCY_UNAVAILABLE', async () => {
    const closed = createRedis(config.redis!);
    await closed.connect();
    await closed.quit();
    const store = new RedisSessionStore(closed, prefix());
    await expect(store.get('any')).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
  });
});
