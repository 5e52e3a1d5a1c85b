import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentStoreContract } from '../../services/ingest/agents/agent-store.contract.ts';
import { RedisAgentStore } from '../../services/ingest/agents/redis-agent-store.ts';
import { call } from '../support/api.ts';
import { makeAgentBody, makeNumberAssignBody, makeSessionBody, makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { drained } from '../support/drained.ts';
import { eventually, flushPrefix, isolate, serviceEnv, testConfig } from '../support/harness.ts';

interface AgentBody {
  id: string;
  name: string;
  config: Record<string, unknown>;
  is_active: boolean;
  user_id: string;
  phone_number: string | null;
}

const AGENT_KEYS = [
  'name',
  'description',
  'type',
  'config',
  'id',
  'is_active',
  'user_id',
  'phone_number',
  'twilio_sid',
  'created_at',
  'updated_at',
];
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;
const DASHBOARD = 'https://dashboard.example';

describe('agents through real Kafka, Redis and the ClickHouse engine', () => {
  const isolation = isolate('agents');
  const config = testConfig(isolation);
  const redis = new Redis(config.redis!.url);
  let app: CallmeterProcess;
  const listOf = async (userId: string) =>
    (await call<AgentBody[]>(app.url, 'GET', '/api/agents/', undefined, { 'x-user-id': userId })).body.map(
      (agent) => agent.name,
    );

  beforeAll(async () => {
    app = await startCallmeter(serviceEnv(isolation, { FRONTEND_URL: `http://localhost:3000, ${DASHBOARD}` }));
  });

  afterAll(async () => {
    await app?.stop();
    redis.disconnect();
  });

  agentStoreContract(
    'RedisAgentStore',
    () => new RedisAgentStore(redis, `${config.redis!.keyPrefix}contract:${Math.random()}:`),
  );

  it('creates an agent in the replaced service’s shape, owned by the user_id sent, and reads it by id', async () => {
    const created = await call<AgentBody>(app.url, 'POST', '/api/agents/', makeAgentBody({ user_id: 'clerk-user-1' }));
    expect(created.status).toBe(201);
    expect(Object.keys(created.body)).toEqual(AGENT_KEYS);
    expect(created.body).toMatchObject({
      name: 'Front desk',
      description: 'Answers the phone',
      type: 'PIPELINE',
      is_active: true,
      user_id: 'clerk-user-1',
      phone_number: null,
      twilio_sid: null,
    });
    expect(created.body).toMatchObject({
      created_at: expect.stringMatching(ISO_UTC),
      updated_at: expect.stringMatching(ISO_UTC),
    });
    const read = await call<AgentBody>(app.url, 'GET', `/api/agents/${created.body.id}`);
    expect([read.status, read.text]).toEqual([200, created.text]);
    // What the worker reads to learn whom a call bills, and how to run it (agent/agent.py).
    expect([read.body.user_id, read.body.config.system_prompt, read.body.config.first_message]).toEqual([
      'clerk-user-1',
      'Be brief.',
      'Hello!',
    ]);
  });

  it('answers bad input with a 4xx as the replaced service did, or a 422 where it answered 500', async () => {
    const unknown = await call(app.url, 'GET', '/api/agents/no-such-agent');
    expect([unknown.status, unknown.text]).toEqual([404, '{"detail":"Agent not found"}']);
    const noUser = await call(app.url, 'GET', '/api/agents/');
    expect([noUser.status, noUser.text]).toEqual([401, '{"detail":"User ID required"}']);
    const longName = await call<{ detail: unknown[] }>(
      app.url,
      'POST',
      '/api/agents/',
      makeAgentBody({ name: 'n'.repeat(101) }),
    );
    expect([longName.status, longName.body.detail]).toEqual([
      422,
      [
        {
          type: 'string_too_long',
          loc: ['body', 'name'],
          msg: 'String should have at most 100 characters',
          input: 'n'.repeat(101),
          ctx: { max_length: 100 },
        },
      ],
    ]);
    const bigConfig = await call<{ detail: { type: string; loc: string[] }[] }>(
      app.url,
      'POST',
      '/api/agents/',
      makeAgentBody({ config: { system_prompt: 'p'.repeat(70_000) } }),
    );
    expect([bigConfig.status, bigConfig.body.detail.map((item) => [item.type, item.loc])]).toEqual([
      422,
      [['value_error', ['body', 'config']]],
    ]);
    const badType = await call<{ detail: { type: string; loc: string[] }[] }>(
      app.url,
      'POST',
      '/api/agents/',
      makeAgentBody({ type: 'ROBOT', user_id: undefined }),
    );
    expect([badType.status, badType.body.detail.map((item) => [item.type, item.loc])]).toEqual([
      422,
      [
        ['enum', ['body', 'type']],
        ['missing', ['body', 'user_id']],
      ],
    ]);
    const nullName = await call(app.url, 'PATCH', '/api/agents/no-such-agent', { name: null });
    expect(nullName.status).toBe(422);
    const patchUnknown = await call(app.url, 'PATCH', '/api/agents/no-such-agent', { name: 'x' });
    expect([patchUnknown.status, patchUnknown.text]).toEqual([404, '{"detail":"Agent not found"}']);
    const deleteUnknown = await call(app.url, 'DELETE', '/api/agents/no-such-agent');
    expect([deleteUnknown.status, deleteUnknown.text]).toEqual([404, '{"detail":"Agent not found"}']);
  });

  it('lists the caller’s active agents newest first; PATCH replaces config; DELETE is a soft delete (204)', async () => {
    const user = 'tenant-list';
    const first = (
      await call<AgentBody>(app.url, 'POST', '/api/agents/', makeAgentBody({ name: 'First', user_id: user }))
    ).body;
    const second = (
      await call<AgentBody>(app.url, 'POST', '/api/agents/', makeAgentBody({ name: 'Second', user_id: user }))
    ).body;
    await call(app.url, 'POST', '/api/agents/', makeAgentBody({ name: 'Someone else’s', user_id: 'tenant-other' }));
    await eventually(async () => expect(await listOf(user)).toEqual(['Second', 'First']));
    // The analytics page asks for /api/agents without the slash: a 307 to the list, as FastAPI answered.
    const unslashed = await fetch(`${app.url}/api/agents`, { headers: { 'x-user-id': user }, redirect: 'manual' });
    expect([unslashed.status, new URL(unslashed.headers.get('location') ?? '', app.url).pathname]).toEqual([
      307,
      '/api/agents/',
    ]);

    const patched = await call<AgentBody>(app.url, 'PATCH', `/api/agents/${first.id}`, {
      name: 'First renamed',
      config: { system_prompt: 'New.' },
    });
    expect([patched.status, patched.body.name, patched.body.config]).toEqual([
      200,
      'First renamed',
      { system_prompt: 'New.' },
    ]);

    const deleted = await call(app.url, 'DELETE', `/api/agents/${second.id}`);
    expect([deleted.status, deleted.text]).toEqual([204, '']);
    const afterDelete = await call<AgentBody>(app.url, 'GET', `/api/agents/${second.id}`);
    expect([afterDelete.status, afterDelete.body.is_active]).toEqual([200, false]);
    await eventually(async () => expect(await listOf(user)).toEqual(['First renamed']));
    expect((await call(app.url, 'DELETE', `/api/agents/${second.id}`)).status).toBe(204);
  });

  it('carries the number telephony assigns, finds the agent by it, and forgets it on release', async () => {
    const agent = (await call<AgentBody>(app.url, 'POST', '/api/agents/', makeAgentBody({ name: 'Phone desk' }))).body;
    const assigned = await call(
      app.url,
      'POST',
      '/api/telephony/numbers/assign',
      makeNumberAssignBody({ agent_id: agent.id, phone_number: '1 (555) 010-7788' }),
    );
    expect(assigned.status).toBe(200);
    expect((await call<AgentBody>(app.url, 'GET', `/api/agents/${agent.id}`)).body.phone_number).toBe('+15550107788');

    // httpx sends params={"phone_number": "+15550107788"} as %2B15550107788.
    const found = await call(app.url, 'GET', '/api/telephony/lookup?phone_number=%2B15550107788');
    expect([found.status, found.body]).toEqual([
      200,
      { agent_id: agent.id, name: 'Phone desk', config: makeAgentBody().config },
    ]);
    expect((await call(app.url, 'GET', '/api/telephony/lookup?phone_number=1-555-010-7788')).status).toBe(200);
    const missing = await call<{ detail: { type: string; loc: string[] }[] }>(app.url, 'GET', '/api/telephony/lookup');
    expect([missing.status, missing.body.detail[0]?.type, missing.body.detail[0]?.loc]).toEqual([
      422,
      'missing',
      ['query', 'phone_number'],
    ]);

    expect((await call(app.url, 'POST', '/api/telephony/numbers/release', { agent_id: agent.id })).status).toBe(200);
    const gone = await call(app.url, 'GET', '/api/telephony/lookup?phone_number=%2B15550107788');
    expect([gone.status, gone.text]).toEqual([404, '{"detail":"No agent found for this phone number"}']);
    expect((await call<AgentBody>(app.url, 'GET', `/api/agents/${agent.id}`)).body.phone_number).toBeNull();

    // A deleted agent answers no calls.
    await call(
      app.url,
      'POST',
      '/api/telephony/numbers/assign',
      makeNumberAssignBody({ agent_id: agent.id, phone_number: '+15550107789' }),
    );
    expect((await call(app.url, 'GET', '/api/telephony/lookup?phone_number=%2B15550107789')).status).toBe(200);
    await call(app.url, 'DELETE', `/api/agents/${agent.id}`);
    expect((await call(app.url, 'GET', '/api/telephony/lookup?phone_number=%2B15550107789')).status).toBe(404);
  });

  it('names the agent in the by-agent cost view and in its sessions that carry no agent_name', async () => {
    const user = 'tenant-costs';
    const agent = (
      await call<AgentBody>(app.url, 'POST', '/api/agents/', makeAgentBody({ name: 'Billing bot', user_id: user }))
    ).body;
    const session = await call<{ id: string; agent_name: string | null }>(
      app.url,
      'POST',
      '/api/sessions/',
      makeSessionBody({ user_id: user, agent_id: agent.id }),
    );
    expect([session.status, session.body.agent_name]).toEqual([201, 'Billing bot']);
    const named = await call<{ id: string }>(
      app.url,
      'POST',
      '/api/sessions/',
      makeSessionBody({ user_id: user, agent_id: agent.id }),
    );
    await call(app.url, 'PATCH', `/api/sessions/${named.body.id}`, { agent_name: 'Given by the worker' });
    expect(
      (await call(app.url, 'POST', '/api/usage/events', makeUsageEventBody(session.body.id, { user_id: user }))).status,
    ).toBe(201);

    await call(app.url, 'PATCH', `/api/agents/${agent.id}`, { name: 'Billing bot v2' });
    expect(
      (await call<{ agent_name: string }>(app.url, 'GET', `/api/sessions/${session.body.id}`)).body.agent_name,
    ).toBe('Billing bot v2');
    expect((await call<{ agent_name: string }>(app.url, 'GET', `/api/sessions/${named.body.id}`)).body.agent_name).toBe(
      'Given by the worker',
    );
    await eventually(async () => {
      const listed = await call<{ sessions: { id: string; agent_name: string }[] }>(
        app.url,
        'GET',
        '/api/sessions/',
        undefined,
        { 'x-user-id': user },
      );
      expect(listed.body.sessions.map((s) => s.agent_name).sort()).toEqual(['Billing bot v2', 'Given by the worker']);
    });
    // The agent's own name wins over the one a session gave it.
    await eventually(async () => {
      const byAgent = await call<{ agent_id: string; agent_name: string }[]>(
        app.url,
        'GET',
        '/api/costs/by-agent',
        undefined,
        { 'x-user-id': user },
      );
      expect(byAgent.body.map((row) => [row.agent_id, row.agent_name])).toEqual([[agent.id, 'Billing bot v2']]);
    });
  });

  it('restores agents from the history after a Redis flush', async () => {
    const agent = (await call<AgentBody>(app.url, 'POST', '/api/agents/', makeAgentBody({ name: 'Survivor' }))).body;
    await call(app.url, 'PATCH', `/api/agents/${agent.id}`, { description: 'patched' });
    await drained(config, 'sessions');
    expect(await flushPrefix(redis, config.redis!.keyPrefix)).toBeGreaterThan(0);
    const read = await call<AgentBody & { description: string }>(app.url, 'GET', `/api/agents/${agent.id}`);
    expect([read.status, read.body.name, read.body.description]).toEqual([200, 'Survivor', 'patched']);
    const patched = await call<AgentBody>(app.url, 'PATCH', `/api/agents/${agent.id}`, { name: 'Survivor 2' });
    expect([patched.status, patched.body.name]).toEqual([200, 'Survivor 2']);
  });

  it('allows the browser origins of FRONTEND_URL, and no other', async () => {
    const preflight = (origin: string) =>
      fetch(`${app.url}/api/agents/`, {
        method: 'OPTIONS',
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-user-id' },
      });
    const allowed = await preflight(DASHBOARD);
    expect([
      allowed.status,
      allowed.headers.get('access-control-allow-origin'),
      allowed.headers.get('access-control-allow-credentials'),
    ]).toEqual([200, DASHBOARD, 'true']);
    expect((await preflight('http://localhost:3000')).status).toBe(200);
    expect((await preflight('https://evil.example')).status).toBe(400);
    const read = await call(app.url, 'GET', '/api/agents/', undefined, { origin: DASHBOARD, 'x-user-id': 'tenant-1' });
    expect(read.headers.get('access-control-allow-origin')).toBe(DASHBOARD);
  });
});

describe('an embedded process restarted', () => {
  it('keeps its agents, their numbers and the lookup, read back from the engine', async () => {
    const env = { DATA_DIR: isolate('agents-embedded').dataDir, LOG_LEVEL: 'warn' };
    const first = await startCallmeter(env);
    let agent: AgentBody;
    try {
      agent = (
        await call<AgentBody>(
          first.url,
          'POST',
          '/api/agents/',
          makeAgentBody({ name: 'Kept', user_id: 'tenant-embedded' }),
        )
      ).body;
      await call(first.url, 'PATCH', `/api/agents/${agent.id}`, { config: { system_prompt: 'Kept prompt' } });
      expect(
        (
          await call(
            first.url,
            'POST',
            '/api/telephony/numbers/assign',
            makeNumberAssignBody({ agent_id: agent.id, phone_number: '+15550109900' }),
          )
        ).status,
      ).toBe(200);
      expect(await first.stop('SIGTERM')).toBe(0);
    } finally {
      await first.stop('SIGKILL');
    }
    const second = await startCallmeter(env);
    try {
      const read = await call<AgentBody>(second.url, 'GET', `/api/agents/${agent.id}`);
      expect([read.status, read.body.name, read.body.config, read.body.phone_number]).toEqual([
        200,
        'Kept',
        { system_prompt: 'Kept prompt' },
        '+15550109900',
      ]);
      const listed = await call<AgentBody[]>(second.url, 'GET', '/api/agents/', undefined, {
        'x-user-id': 'tenant-embedded',
      });
      expect(listed.body.map((a) => a.id)).toEqual([agent.id]);
      const found = await call(second.url, 'GET', '/api/telephony/lookup?phone_number=%2B15550109900');
      expect([found.status, found.body]).toEqual([
        200,
        { agent_id: agent.id, name: 'Kept', config: { system_prompt: 'Kept prompt' } },
      ]);
      expect(await second.stop('SIGTERM')).toBe(0);
    } finally {
      await second.stop('SIGKILL');
    }
  });
});
