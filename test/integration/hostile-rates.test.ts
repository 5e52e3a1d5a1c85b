import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { CostLedger, expectViewsExact } from '../support/cost-ledger.ts';
import { eventually } from '../support/harness.ts';
import { hostileModes, type Running } from '../support/hostile-modes.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';

// A tenant that fills its cap of rate entries, beside a steady tenant posting usage: the tenant past its
// cap gets a clear 409, the steady tenant's prices and requests are as they were, the process stays ready.

// Lower than the default, so that the cap is reached in seconds; what it caps is the same.
const CAP = 150;
const LIMITS = { RATE_ENTRIES_PER_TENANT: String(CAP) };
const MODES = hostileModes('hostile-rates', { all: LIMITS });

const NOISY = 'tenant-rates-noisy';
const STEADY = 'tenant-rates-steady';
// resemble on the default card: 0.00004 a character.
const CARD_RATE_ID = 'tts-resemble-2024-01';

interface Listing {
  readonly id: string;
  readonly scope: string;
  readonly user_id: string | null;
  readonly price: string;
  readonly effective_to: string | null;
}
interface Quote {
  readonly total_cost: string;
  readonly scope: string;
  readonly components: { rate_id: string }[];
}

/** A noisy entry: its own model, so each is its own price in the listing. */
function noisyEntry(n: number): Record<string, unknown> {
  return { user_id: NOISY, provider: 'resemble', model: `voice-${n}`, event_type: 'tts_characters', price: '0.00001' };
}

describe.each(MODES)('a tenant at its cap of rate entries beside a steady one, on $name', (mode) => {
  let running: Running;
  let steady: SteadyTenant;
  const ledger = new CostLedger();
  const created: string[] = [];
  const post = <T>(path: string, body: unknown) => call<T>(running.ingest.url, 'POST', path, body);
  const quote = (user: string, model: string | null) =>
    call<Quote>(running.query.url, 'POST', '/api/rates/quote', {
      user_id: user,
      provider: 'resemble',
      ...(model === null ? {} : { model }),
      event_type: 'tts_characters',
      quantity: 1000,
    });

  beforeAll(async () => {
    running = await mode.start();
    const session = await post<{ id: string }>('/api/sessions/', {
      room_name: `${STEADY}-${randomUUID()}`,
      user_id: STEADY,
      agent_id: 'agent-rates-steady',
    });
    expect(session.status).toBe(201);
    ledger.addSession(session.body.id, STEADY, 'agent-rates-steady');
    // One request first, so that the steady tenant's measured requests find the session known.
    const first = { session_id: session.body.id, user_id: STEADY, provider: 'resemble', event_type: 'tts_characters' };
    expect((await post('/api/usage/events', { ...first, quantity: 1 })).status).toBe(201);
    ledger.addTotal(session.body.id, new Exact('0.00004'));
    steady = new SteadyTenant(running.ingest.url, STEADY, session.body.id);
    steady.start();
  });

  afterAll(async () => {
    await steady?.stop();
    await running?.stop();
  });

  it('creates entries up to the cap, then answers each one past it with a 409 that names the cap', async () => {
    for (let n = 0; n < CAP; n += 10) {
      const answers = await Promise.all(
        Array.from({ length: Math.min(10, CAP - n) }, (_, k) => post<Listing>('/api/rates', noisyEntry(n + k))),
      );
      expect(answers.map((answer) => answer.status)).toEqual(answers.map(() => 201));
      created.push(...answers.map((answer) => answer.body.id));
    }
    for (let n = 0; n < 5; n += 1) {
      const refused = await post<{ detail: string }>('/api/rates', noisyEntry(CAP + n));
      expect([refused.status, refused.body.detail]).toEqual([
        409,
        `User ${NOISY} already has ${CAP} rate entries in force, the most one user may hold: end one (DELETE /api/rates/{id}) before adding another`,
      ]);
    }
  }, 60_000);

  it('frees a place when one of the entries is ended, and only that one', async () => {
    const ended = await call<Listing>(running.ingest.url, 'DELETE', `/api/rates/${created[0]}`);
    expect([ended.status, ended.body.effective_to === null]).toEqual([200, false]);
    expect((await post('/api/rates', noisyEntry(CAP + 10))).status).toBe(201);
    expect((await post('/api/rates', noisyEntry(CAP + 11))).status).toBe(409);
  });

  it('prices the noisy tenant by its entries and the steady tenant by the card, its own listing without them', async () => {
    const noisy = await eventually(
      async () => {
        const answer = await quote(NOISY, 'voice-1');
        expect([answer.status, answer.body.scope, answer.body.total_cost]).toEqual([200, 'tenant', '0.01']);
        return answer;
      },
      30_000,
      200,
    );
    expect(noisy.body.components.map((part) => part.rate_id)).toEqual([created[1]]);
    // The ended entry no longer prices its model: the card does, once the end has been read.
    await eventually(
      async () => {
        const answer = await quote(NOISY, 'voice-0');
        expect([answer.status, answer.body.scope, answer.body.total_cost]).toEqual([200, 'card', '0.04']);
      },
      30_000,
      200,
    );
    const own = await quote(STEADY, 'voice-1');
    expect([own.status, own.body.scope, own.body.total_cost, own.body.components[0]?.rate_id]).toEqual([
      200,
      'card',
      '0.04',
      CARD_RATE_ID,
    ]);
    const listed = await call<Listing[]>(running.query.url, 'GET', `/api/rates?user_id=${STEADY}&provider=resemble`);
    expect(listed.body.filter((entry) => entry.scope === 'tenant')).toEqual([]);
    // The noisy tenant's own listing still shows every entry, the ended one too, as the rates API always did.
    const noisyListed = await eventually(
      async () => {
        const answer = await call<Listing[]>(running.query.url, 'GET', `/api/rates?user_id=${NOISY}&provider=resemble`);
        const tenant = answer.body.filter((entry) => entry.scope === 'tenant');
        expect(tenant).toHaveLength(CAP + 1);
        return tenant;
      },
      30_000,
      200,
    );
    expect(noisyListed.map((entry) => entry.id)).toContain(created[0]);
  }, 90_000);

  it("stores the steady tenant's usage at the card's prices, every view exact", async () => {
    await steady.stop();
    ledger.addTotal(steady.sessionId, steady.total);
    await expectViewsExact(ledger, running.query.url, [STEADY], (check) => eventually(check, 30_000, 200));
    expect(steady.total.greaterThan(new Exact(0))).toBe(true);
  }, 120_000);

  it("answered the steady tenant's every request with a success, within 1 second but for one in twenty", () => {
    const seen = { requests: steady.requests.length, over_seconds: (Date.now() - steady.startedAt) / 1000 };
    expect(seen.requests).toBeGreaterThan(0);
    expect(
      steady.requests.filter((request) => request.status < 200 || request.status >= 300 || request.ms >= 3000),
      JSON.stringify(seen),
    ).toEqual([]);
    // A starved tenant waits again and again; a single slow answer in a short run is the shared machine's.
    const slow = steady.requests.filter((request) => request.ms >= 1000);
    expect(slow.length, JSON.stringify({ ...seen, slow })).toBeLessThanOrEqual(
      Math.max(1, Math.floor(seen.requests / 20)),
    );
  });

  it('stays healthy and ready', async () => {
    for (const process of new Set([running.ingest, running.query]))
      for (const path of ['/healthz', '/readyz'])
        expect([process.url, path, (await fetch(`${process.url}${path}`)).status]).toEqual([process.url, path, 200]);
  });
});
