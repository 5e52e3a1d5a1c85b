import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { inject } from 'vitest';
import { AnswerCache } from '../../services/query/answer-cache.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { RedisAnnouncements } from '../../services/shared/redis/stored-announcements.ts';
import { call } from '../support/api.ts';
import { makeAgentBody, makeSessionBody, makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate } from '../support/harness.ts';

// resemble's card price: 0.00004 a character, so the builder's 3-character event costs 0.00012.
const EVENT_COST = 0.00012;
const money = (events: number) => (Math.round(events * EVENT_COST * 1e5) / 1e5).toString();
/** The timeline's events and cost over all its days (a test run across midnight has two). */
const timelineTotal = (points: readonly Point[]) => {
  const events = points.reduce((sum, point) => sum + point.event_count, 0);
  return [events, money(events)];
};

interface Summary {
  total_cost: string;
  event_count: number;
  live_cost: string;
}
interface Point {
  total_cost: string;
  event_count: number;
}
interface AgentCost {
  agent_id: string;
  agent_name: string;
  total_cost: string;
  event_count: number;
}

describe('answers kept between stored batches, on the embedded process', () => {
  let app: CallmeterProcess;
  const get = async <T>(tenant: string, path: string) => {
    const answer = await call<T>(app.url, 'GET', path, undefined, { 'x-user-id': tenant });
    expect(answer.status, answer.text).toBe(200);
    return answer.body;
  };
  const views = (tenant: string) =>
    Promise.all([
      get<Summary>(tenant, '/api/costs/summary'),
      get<Point[]>(tenant, '/api/costs/timeline'),
      get<AgentCost[]>(tenant, '/api/costs/by-agent'),
    ]);
  const startCall = async (tenant: string, agentId: string | null = null) =>
    (
      await call<{ id: string }>(
        app.url,
        'POST',
        '/api/sessions/',
        makeSessionBody({ user_id: tenant, agent_id: agentId }),
      )
    ).body.id;
  const record = async (tenant: string, sessionId: string, events: number) => {
    const batch = Array.from({ length: events }, () => makeUsageEventBody(sessionId, { user_id: tenant }));
    const answer = await call<{ status: string }[]>(app.url, 'POST', '/api/usage/events/batch', batch);
    expect(
      answer.body.every((item) => item.status === 'accepted'),
      answer.text,
    ).toBe(true);
  };

  beforeAll(async () => {
    // The default configuration: the cache on, two read connections.
    app = await startCallmeter({ DATA_DIR: isolate('answer-cache').dataDir, LOG_LEVEL: 'warn' });
  });

  afterAll(async () => {
    await app?.stop();
  });

  it('includes a usage event in the next answer of every view once it is stored, never an answer kept from before', async () => {
    const tenant = 'tenant-fresh';
    const agent = (await call<{ id: string }>(app.url, 'POST', '/api/agents/', makeAgentBody({ user_id: tenant }))).body
      .id;
    const sessionId = await startCall(tenant, agent);
    for (let stored = 1; stored <= 4; stored += 1) {
      await record(tenant, sessionId, 1);
      // Asked twice: the second is the one a cache would answer.
      for (let ask = 0; ask < 2; ask += 1) {
        const [summary, timeline, byAgent] = await views(tenant);
        expect([summary.event_count, summary.total_cost, summary.live_cost]).toEqual([
          stored,
          money(stored),
          money(stored),
        ]);
        expect(timelineTotal(timeline)).toEqual([stored, money(stored)]);
        expect(byAgent).toMatchObject([{ agent_id: agent, agent_name: 'Front desk', event_count: stored }]);
      }
    }
  });

  it('follows what else an answer shows: a call that ended, an agent renamed by the tenant that owns it', async () => {
    const tenant = 'tenant-changes';
    // The agent's own name shows in the by-agent view of any tenant whose calls it took.
    const agent = (
      await call<{ id: string }>(app.url, 'POST', '/api/agents/', makeAgentBody({ user_id: 'tenant-owner' }))
    ).body.id;
    const sessionId = await startCall(tenant, agent);
    await record(tenant, sessionId, 2);
    const [before, , agentsBefore] = await views(tenant);
    expect(before.live_cost).toBe(money(2));
    expect(agentsBefore[0]!.agent_name).toBe('Front desk');
    expect((await call(app.url, 'PATCH', `/api/agents/${agent}`, { name: 'Night desk' })).status).toBe(200);
    expect((await views(tenant))[2][0]!.agent_name).toBe('Night desk');
    expect((await call(app.url, 'PATCH', `/api/sessions/${sessionId}`, { status: 'COMPLETED' })).status).toBe(200);
    const [after] = await views(tenant);
    expect([after.live_cost, after.total_cost]).toEqual(['0', money(2)]);
  });

  it('answers many concurrent dashboards of many tenants correctly, while their usage is being stored', async () => {
    const tenants = Array.from({ length: 8 }, (_, i) => `tenant-concurrent-${i}`);
    const sessions = await Promise.all(tenants.map((tenant) => startCall(tenant, `agent-of-${tenant}`)));
    // Tenant i stores i + 1 batches of i + 1 events, while 8 dashboards each ask every view of every tenant.
    const writes = Promise.all(
      tenants.map(async (tenant, i) => {
        for (let batch = 0; batch <= i; batch += 1) await record(tenant, sessions[i]!, i + 1);
      }),
    );
    const reads = Promise.all(Array.from({ length: 8 }, () => Promise.all(tenants.map(views))));
    await Promise.all([writes, reads]);
    // Every batch is stored: 32 concurrent requests of each view now, all with everything.
    const answers = await Promise.all(Array.from({ length: 4 }, () => Promise.all(tenants.map(views))));
    for (const round of answers) {
      round.forEach(([summary, timeline, byAgent], i) => {
        const events = (i + 1) * (i + 1);
        expect([summary.event_count, summary.total_cost]).toEqual([events, money(events)]);
        expect(timelineTotal(timeline)).toEqual([events, money(events)]);
        expect(byAgent).toMatchObject([{ agent_id: `agent-of-${tenants[i]}`, event_count: events }]);
      });
    }
  });
});

describe('answers kept on the strength of Redis announcements', () => {
  const isolation = isolate('answer-cache-redis');
  const name = `answers-${isolation.suffix}`;
  let redis: Redis;
  let admin: Redis;
  let announcements: RedisAnnouncements;
  let cache: AnswerCache;

  beforeAll(async () => {
    const url = inject('services').redisUrl;
    // Named, so that the test can find its own subscription among the run's other clients.
    redis = new Redis(url, { connectionName: name });
    admin = new Redis(url);
    announcements = new RedisAnnouncements(redis, isolation.keyPrefix, createLogger('silent'));
    cache = new AnswerCache(announcements, { maxAgeMs: 60_000, maxBytes: 1024 * 1024, agentsAnnounced: false });
    await eventually(async () => expect(announcements.listening()).toBe(true));
  });

  afterAll(async () => {
    cache?.close();
    await announcements?.close();
    await Promise.all([redis?.quit(), admin?.quit()]);
  });

  let reads = 0;
  const answer = (tenant: string) => cache.answer(tenant, 'summary', async () => ++reads);

  it('drops a tenant’s answers when another process announces its stored batch', async () => {
    const kept = await answer('acme');
    expect(await answer('acme')).toBe(kept);
    const other = new RedisAnnouncements(redis, isolation.keyPrefix, createLogger('silent'));
    await other.publish({ tenants: ['acme'], sessions: [] });
    await eventually(async () => expect(await answer('acme')).not.toBe(kept));
  });

  it('hears its own announcements at once, and once', async () => {
    const heard: string[] = [];
    const stop = announcements.subscribe(({ tenants }) => heard.push(...tenants));
    await announcements.publish({ tenants: ['initech'], sessions: [] });
    expect(heard).toEqual(['initech']);
    // Redis delivers in order what it took in order: once the marker is heard, so was the copy of ours.
    await new RedisAnnouncements(redis, isolation.keyPrefix, createLogger('silent')).publish({
      tenants: ['marker'],
      sessions: [],
    });
    await eventually(async () => expect(heard).toEqual(['initech', 'marker']));
    stop();
  });

  it('drops everything when its subscription’s connection is lost, and keeps answers again once subscribed anew', async () => {
    const kept = await answer('globex');
    expect(await answer('globex')).toBe(kept);
    let missed = 0;
    const stop = announcements.onMissed(() => (missed += 1));
    const clients = String(await admin.call('CLIENT', 'LIST', 'TYPE', 'pubsub'))
      .split('\n')
      .filter((line) => line.includes(`name=${name} `));
    expect(clients).toHaveLength(1);
    await admin.call('CLIENT', 'KILL', 'ID', /\bid=(\d+)/.exec(clients[0]!)![1]!);
    await eventually(async () => expect(missed).toBe(1));
    stop();
    await eventually(async () => expect(announcements.listening()).toBe(true));
    const fresh = await answer('globex');
    expect(fresh).not.toBe(kept);
    expect(await answer('globex')).toBe(fresh);
    // Announcements are heard again after the reconnection.
    await announcements.publish({ tenants: ['globex'], sessions: [] });
    await eventually(async () => expect(await answer('globex')).not.toBe(fresh));
  });
});
