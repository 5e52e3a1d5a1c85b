import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { makeAgentBody, makeUsageEventBody } from '../support/bodies.ts';
import { eventually } from '../support/harness.ts';
import { hostileModes, type Running } from '../support/hostile-modes.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';

// Rooms, numbers and the caps on agents and numbers, tried by hostile tenants with credentials bound
// to them (AUTH_MODE=on) while a steady tenant posts usage beside them: a tenant's room name and its
// numbers are its own, another tenant's are never seen, and a tenant's agents and numbers are capped.

const ADMIN_API_KEY = `hostile-rooms-admin-${randomUUID()}`;
const AGENTS_PER_TENANT = 3;
const NUMBERS_PER_TENANT = 2;
const ENV = {
  AUTH_MODE: 'on',
  ADMIN_API_KEY,
  AUTH_KEY_REFRESH_MS: '500',
  AGENTS_PER_TENANT: String(AGENTS_PER_TENANT),
  NUMBERS_PER_TENANT: String(NUMBERS_PER_TENANT),
  LOG_LEVEL: 'warn',
};
const MODES = hostileModes('hostile-rooms', { all: ENV });

// resemble: 0.00004 a character.
const characters = (n: number) => new Exact('0.00004').times(n);
const admin = { authorization: `Bearer ${ADMIN_API_KEY}` };
let numbers = 0;
const PHONE_BASE = 1_000_000 + Math.floor(Math.random() * 8_000_000);
/** A fresh E.164 number of this run. */
const phone = () => `+1555${PHONE_BASE + (numbers += 1)}`;

interface SessionBody {
  readonly id: string;
  readonly status: string;
  readonly user_id: string;
  readonly room_name: string;
}

describe.each(MODES)('hostile rooms and numbers beside a steady tenant, on $name', (mode) => {
  let running: Running;
  let steady: SteadyTenant;
  const tenants: Record<string, Record<string, string>> = {};
  // Each tenant names its own room "shared-room": unique per mode run, so that runs never meet.
  const room = `shared-room-${randomUUID()}`;

  const as = <T = Record<string, unknown>>(user: string, method: string, path: string, body?: unknown) =>
    call<T>(running.ingest.url, method, path, body, tenants[user]);

  async function boundKey(user: string): Promise<Record<string, string>> {
    const answer = await call<{ key: string }>(
      running.ingest.url,
      'POST',
      '/api/admin/keys',
      { scope: 'ingest', user_id: user, name: `ingest-${user}` },
      admin,
    );
    expect(answer.status).toBe(201);
    return { authorization: `Bearer ${answer.body.key}` };
  }

  async function agentOf(user: string): Promise<string> {
    const answer = await as<{ id: string }>(user, 'POST', '/api/agents/', makeAgentBody({ user_id: user }));
    expect([answer.status, answer.text]).toEqual([201, answer.text]);
    return answer.body.id;
  }

  /** The tenant's summary total, read by the admin for it: what it was metered. */
  async function metered(user: string): Promise<string> {
    const answer = await call<{ total_cost: string }>(running.query.url, 'GET', '/api/costs/summary', undefined, {
      ...admin,
      'x-user-id': user,
    });
    expect(answer.status).toBe(200);
    return new Exact(answer.body.total_cost).toFixed();
  }

  beforeAll(async () => {
    running = await mode.start();
    for (const user of ['tenant-a', 'tenant-b', 'tenant-steady', 'tenant-capped']) tenants[user] = await boundKey(user);
    const session = await as<SessionBody>('tenant-steady', 'POST', '/api/sessions/', {
      room_name: room,
      user_id: 'tenant-steady',
    });
    expect(session.status).toBe(201);
    steady = new SteadyTenant(running.ingest.url, 'tenant-steady', session.body.id, tenants['tenant-steady']);
    steady.start();
  }, 120_000);

  afterAll(async () => {
    await steady?.stop();
    await running?.stop();
  });

  it('gives two tenants the same room name at once, each its own session, read, posted to, ended and metered apart', async () => {
    // B takes the room first, as in the reproduction; A's create is no 409 and tells A nothing of B.
    const b = await as<SessionBody>('tenant-b', 'POST', '/api/sessions/', { room_name: room, user_id: 'tenant-b' });
    const a = await as<SessionBody>('tenant-a', 'POST', '/api/sessions/', { room_name: room, user_id: 'tenant-a' });
    expect([b.status, a.status]).toEqual([201, 201]);
    expect(a.body.id).not.toBe(b.body.id);
    expect([a.body.status, a.body.user_id, b.body.user_id]).toEqual(['ACTIVE', 'tenant-a', 'tenant-b']);
    // The same create again joins the tenant's own session (one session per live room of a tenant).
    expect(
      (await as<SessionBody>('tenant-a', 'POST', '/api/sessions/', { room_name: room, user_id: 'tenant-a' })).body.id,
    ).toBe(a.body.id);

    for (const [user, own] of [
      ['tenant-a', a.body],
      ['tenant-b', b.body],
    ] as const) {
      const read = await as<SessionBody>(user, 'GET', `/api/sessions/by-room/${room}`);
      expect([read.status, read.body.id]).toEqual([200, own.id]);
      const turn = await as<{ session_id: string }>(user, 'POST', `/api/sessions/by-room/${room}/transcripts`, {
        content: `hello from ${user}`,
        speaker: 'USER',
      });
      expect([turn.status, turn.body.session_id]).toEqual([201, own.id]);
      const usage = await as(
        user,
        'POST',
        '/api/usage/events',
        makeUsageEventBody(own.id, { user_id: user, quantity: user === 'tenant-a' ? 100 : 250 }),
      );
      expect(usage.status).toBe(201);
    }

    // A worker that names no tenant (an unbound key without x-user-id, as the replaced service's
    // worker posts) is asked for one: the room is live in several tenants, and the latest of any
    // would put A's turns into B's call and end it. Nothing is posted or ended, no tenant is revealed.
    const unnamed = (method: string, path: string, body?: unknown) =>
      call<{ detail: string }>(running.ingest.url, method, path, body, admin);
    for (const [method, path, body] of [
      ['GET', `/api/sessions/by-room/${room}`, undefined],
      ['POST', `/api/sessions/by-room/${room}/transcripts`, { content: 'unnamed', speaker: 'USER' }],
      ['POST', `/api/sessions/by-room/${room}/end`, undefined],
    ] as const) {
      const refused = await unnamed(method, path, body);
      expect([refused.status, refused.body.detail]).toEqual([409, expect.stringContaining('name the user')]);
      expect(refused.text).not.toMatch(/tenant-(a|b|steady)/);
    }
    for (const [user, own] of [
      ['tenant-a', a.body],
      ['tenant-b', b.body],
    ] as const)
      expect((await as<SessionBody>(user, 'GET', `/api/sessions/${own.id}`)).body.status).toBe('ACTIVE');
    const named = await call<SessionBody>(running.ingest.url, 'GET', `/api/sessions/by-room/${room}`, undefined, {
      ...admin,
      'x-user-id': 'tenant-a',
    });
    expect([named.status, named.body.id]).toEqual([200, a.body.id]);

    // A room only B uses is, for A, what a room nobody uses is: the same 404, byte for byte.
    const onlyB = `only-b-${randomUUID()}`;
    expect((await as('tenant-b', 'POST', '/api/sessions/', { room_name: onlyB, user_id: 'tenant-b' })).status).toBe(
      201,
    );
    const hidden = await as('tenant-a', 'GET', `/api/sessions/by-room/${onlyB}`);
    const unknown = await as('tenant-a', 'GET', `/api/sessions/by-room/never-${randomUUID()}`);
    expect([hidden.status, hidden.text]).toEqual([unknown.status, unknown.text]);
    expect([hidden.status, hidden.text]).toEqual([404, '{"detail":"Session not found"}']);
    const hiddenTurn = await as('tenant-a', 'POST', `/api/sessions/by-room/${onlyB}/transcripts`, {
      content: 'x',
      speaker: 'USER',
    });
    expect([hiddenTurn.status, hiddenTurn.text]).toEqual([404, '{"detail":"Session not found"}']);
    expect((await as('tenant-a', 'POST', `/api/sessions/by-room/${onlyB}/end`)).status).toBe(404);

    // B ends its session of the room; A's stays live, and A's transcript holds only A's turn.
    const ended = await as<SessionBody>('tenant-b', 'POST', `/api/sessions/by-room/${room}/end`);
    expect([ended.body.id, ended.body.status]).toEqual([b.body.id, 'COMPLETED']);
    expect((await as<SessionBody>('tenant-a', 'GET', `/api/sessions/by-room/${room}`)).body.status).toBe('ACTIVE');
    // Apart, ingest reads the history of its own embedded engine, which the consumer does not write:
    // there, each turn's session_id above is what shows where it went.
    if (running.ingest === running.query)
      await eventually(async () => {
        const turns = await as<{ content: string }[]>('tenant-a', 'GET', `/api/sessions/${a.body.id}/transcripts`);
        expect(turns.body.map((t) => t.content)).toEqual(['hello from tenant-a']);
      }, 30_000);
    await eventually(async () => {
      expect(await metered('tenant-a')).toBe(characters(100).toFixed());
      expect(await metered('tenant-b')).toBe(characters(250).toFixed());
    }, 30_000);
  }, 90_000);

  it('answers a lookup with the caller’s own agent only, releases a deleted agent’s number, and gives a deleted agent none', async () => {
    const agentA = await agentOf('tenant-a');
    const numberA = phone();
    const assigned = await as('tenant-a', 'POST', '/api/telephony/numbers/assign', {
      agent_id: agentA,
      phone_number: numberA,
    });
    expect(assigned.status).toBe(200);
    const lookup = (user: string, number: string) =>
      as<{ agent_id: string }>(user, 'GET', `/api/telephony/lookup?phone_number=${encodeURIComponent(number)}`);
    expect((await lookup('tenant-a', numberA)).body.agent_id).toBe(agentA);
    // B's bound worker learns nothing of A's number: the answer of a number nobody holds.
    const other = await lookup('tenant-b', numberA);
    const nobody = await lookup('tenant-b', phone());
    expect([other.status, other.text]).toEqual([nobody.status, nobody.text]);
    expect(other.status).toBe(404);

    expect((await as('tenant-a', 'DELETE', `/api/agents/${agentA}`)).status).toBe(204);
    const held = await as<{ phone_number: string | null }>('tenant-a', 'GET', `/api/telephony/numbers/${agentA}`);
    expect([held.status, held.body.phone_number]).toEqual([200, null]);
    expect((await lookup('tenant-a', numberA)).status).toBe(404);
    // The number is free again: another agent of A takes it.
    const next = await agentOf('tenant-a');
    expect(
      (await as('tenant-a', 'POST', '/api/telephony/numbers/assign', { agent_id: next, phone_number: numberA })).status,
    ).toBe(200);
    expect((await lookup('tenant-a', numberA)).body.agent_id).toBe(next);
    const deleted = await as<{ detail: string }>('tenant-a', 'POST', '/api/telephony/numbers/assign', {
      agent_id: agentA,
      phone_number: phone(),
    });
    expect([deleted.status, deleted.body.detail]).toEqual([400, expect.stringContaining('is deleted')]);
    // Deleting it again is the same 204: a retried DELETE after a refused release finds nothing left.
    expect((await as('tenant-a', 'DELETE', `/api/agents/${agentA}`)).status).toBe(204);
  }, 60_000);

  it('gives two tenants the same number at once, each found by its own worker, and asks an unbound one for the tenant', async () => {
    const agentB = await agentOf('tenant-b');
    const agentA = await agentOf('tenant-a');
    const number = phone();
    const assign = (user: string, agent: string) =>
      as(user, 'POST', '/api/telephony/numbers/assign', { agent_id: agent, phone_number: number });
    // B takes the number first, as in the reproduction; A's assign is no 409 and tells A nothing of B.
    expect((await assign('tenant-b', agentB)).status).toBe(200);
    expect((await assign('tenant-a', agentA)).status).toBe(200);
    const lookup = (headers: Record<string, string>) =>
      call<{ agent_id: string; detail: string }>(
        running.ingest.url,
        'GET',
        `/api/telephony/lookup?phone_number=${encodeURIComponent(number)}`,
        undefined,
        headers,
      );
    expect((await lookup(tenants['tenant-a']!)).body.agent_id).toBe(agentA);
    expect((await lookup(tenants['tenant-b']!)).body.agent_id).toBe(agentB);
    // A credential bound to no tenant names one with x-user-id, or is told to.
    expect((await lookup({ ...admin, 'x-user-id': 'tenant-b' })).body.agent_id).toBe(agentB);
    const ambiguous = await lookup(admin);
    expect([ambiguous.status, ambiguous.body.detail]).toEqual([409, expect.stringContaining('name the tenant')]);
    // B's release leaves A's number alone; then the number has one holder again.
    expect((await as('tenant-b', 'POST', '/api/telephony/numbers/release', { agent_id: agentB })).status).toBe(200);
    expect((await lookup(tenants['tenant-b']!)).status).toBe(404);
    expect((await lookup(admin)).body.agent_id).toBe(agentA);
    expect((await lookup(tenants['tenant-a']!)).body.agent_id).toBe(agentA);
  }, 60_000);

  it('caps a tenant’s agents and numbers with a 409 naming the cap, frees a place on delete, and leaves other tenants alone', async () => {
    const agents: string[] = [];
    for (let i = 0; i < AGENTS_PER_TENANT; i += 1) agents.push(await agentOf('tenant-capped'));
    const past = await as<{ detail: string }>(
      'tenant-capped',
      'POST',
      '/api/agents/',
      makeAgentBody({ user_id: 'tenant-capped' }),
    );
    expect([past.status, past.body.detail]).toEqual([
      409,
      expect.stringContaining(`AGENTS_PER_TENANT=${AGENTS_PER_TENANT}`),
    ]);
    // Another tenant creates as before.
    expect((await as('tenant-b', 'POST', '/api/agents/', makeAgentBody({ user_id: 'tenant-b' }))).status).toBe(201);

    for (const agent of agents.slice(0, NUMBERS_PER_TENANT))
      expect(
        (await as('tenant-capped', 'POST', '/api/telephony/numbers/assign', { agent_id: agent, phone_number: phone() }))
          .status,
      ).toBe(200);
    // At the cap, an agent that holds a number already gets the documented 400, not the cap's 409.
    const again = await as<{ detail: string }>('tenant-capped', 'POST', '/api/telephony/numbers/assign', {
      agent_id: agents[0],
      phone_number: phone(),
    });
    expect([again.status, again.body.detail]).toEqual([400, expect.stringContaining('already has number')]);
    const third = await as<{ detail: string }>('tenant-capped', 'POST', '/api/telephony/numbers/assign', {
      agent_id: agents[NUMBERS_PER_TENANT],
      phone_number: phone(),
    });
    expect([third.status, third.body.detail]).toEqual([
      409,
      expect.stringContaining(`NUMBERS_PER_TENANT=${NUMBERS_PER_TENANT}`),
    ]);

    // Deleting an agent frees its place and its number: both caps take one more.
    expect((await as('tenant-capped', 'DELETE', `/api/agents/${agents[0]}`)).status).toBe(204);
    expect(
      (
        await as('tenant-capped', 'POST', '/api/telephony/numbers/assign', {
          agent_id: agents[NUMBERS_PER_TENANT],
          phone_number: phone(),
        })
      ).status,
    ).toBe(200);
    expect(
      (await as('tenant-capped', 'POST', '/api/agents/', makeAgentBody({ user_id: 'tenant-capped' }))).status,
    ).toBe(201);
    const list = await call<unknown[]>(running.ingest.url, 'GET', '/api/agents/', undefined, tenants['tenant-capped']);
    expect(list.status).toBe(200);
  }, 60_000);

  it("answered the steady tenant's every request with a success throughout, and metered it exactly", async () => {
    const requests = await steady.stop();
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.filter((request) => request.status < 200 || request.status >= 300)).toEqual([]);
    await eventually(async () => expect(await metered('tenant-steady')).toBe(steady.total.toFixed()), 30_000);
  }, 60_000);
});
