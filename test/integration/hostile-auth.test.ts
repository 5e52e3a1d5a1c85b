import { execFile } from 'node:child_process';
import { request } from 'node:http';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { makeSessionBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate, serviceEnv } from '../support/harness.ts';
import { startJwksServer, type JwksServer } from '../support/jwks-server.ts';
import { SteadyTenant } from '../support/steady-tenant.ts';

// The auth edges of a hostile caller and an unlucky operator: keys made while AUTH_MODE=off, a failing
// JWKS, tokens good for too long, a flood of bad credentials from one address, and a tenant making keys
// without end; while a steady tenant posts usage with its own key beside, and every request of it succeeds.

const ADMIN_API_KEY = 'hostile-auth-admin-key-0123456789abcdefghij';
const BOOTSTRAP = { authorization: `Bearer ${ADMIN_API_KEY}` };
// Above the 30 requests each case sends at once from one address: a token being checked holds one of its
// address's tries until it is found good, and the JWKS case's tokens are all good.
const FAILURES_BURST = 40;
const FAILURES_PER_SECOND = 2;
const KEYS_PER_TENANT = 3;
const JWKS_COOLDOWN_MS = 5_000;
const ROOT = path.resolve(import.meta.dirname, '../..');

/** One process, started again on the same data (the keys made while `off` are read back from ClickHouse). */
interface Mode {
  readonly name: string;
  start(env: Record<string, string>): Promise<CallmeterProcess>;
}

function modes(): Mode[] {
  const embedded = isolate('hostile-auth');
  const kafka = isolate('hostile-auth-kafka');
  return [
    {
      name: 'the embedded process',
      start: (env) => startCallmeter({ DATA_DIR: embedded.dataDir, LOG_LEVEL: 'warn', ...env }),
    },
    {
      // One process rather than ingest apart: with the embedded ClickHouse each process has its own data
      // folder, and an ingest apart would not read back, after its restart, the keys its consumer stored.
      name: 'one process over Kafka and Redis',
      start: (env) => startCallmeter(serviceEnv(kafka, env)),
    },
  ];
}

/** A request from a chosen loopback address (127.0.0.2 is this machine too), for the limit per source address. */
function callFrom(
  localAddress: string,
  url: string,
  method: string,
  pathname: string,
  headers: Record<string, string>,
): Promise<{ status: number; retryAfter: string | undefined; text: string }> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${url}${pathname}`, { method, headers, localAddress }, (response) => {
      let text = '';
      response.on('data', (chunk: Buffer) => (text += chunk.toString()));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, retryAfter: response.headers['retry-after'], text }),
      );
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
}

/** `total` calls, `concurrency` at a time. */
async function inWaves<T>(total: number, concurrency: number, one: (i: number) => Promise<T>): Promise<T[]> {
  const answers: T[] = [];
  for (let start = 0; start < total; start += concurrency)
    answers.push(
      ...(await Promise.all(Array.from({ length: Math.min(concurrency, total - start) }, (_, k) => one(start + k)))),
    );
  return answers;
}

describe.each(modes())('hostile auth beside a steady tenant, AUTH_MODE=on, on $name', (mode) => {
  let jwks: JwksServer;
  let app: CallmeterProcess;
  let steady: SteadyTenant;
  const madeWhileOff: Record<'admin' | 'worker', { id: string; key: string }> = {} as never;

  const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });
  const makeKey = (body: Record<string, unknown>) => call(app.url, 'POST', '/api/admin/keys', body, BOOTSTRAP);

  beforeAll(async () => {
    jwks = await startJwksServer();
    // An operator runs with AUTH_MODE=off, and anyone who reaches the port makes keys.
    const open = await mode.start({ AUTH_MODE: 'off' });
    try {
      for (const [which, body] of [
        ['admin', { scope: 'admin', name: 'made while off' }],
        ['worker', { scope: 'ingest', user_id: 'tenant-off', name: 'worker made while off' }],
      ] as const) {
        const made = await call(open.url, 'POST', '/api/admin/keys', body);
        expect([made.status, made.body.created_while_auth_off]).toEqual([201, true]);
        madeWhileOff[which] = { id: made.body.id as string, key: made.body.key as string };
      }
      // Stored (the audit log is read from ClickHouse) before the process is stopped.
      await eventually(async () => {
        const audit = await call<{ subject_id: string }[]>(open.url, 'GET', '/api/admin/audit?limit=100');
        const subjects = new Set(audit.body.map((entry) => entry.subject_id));
        expect([subjects.has(madeWhileOff.admin.id), subjects.has(madeWhileOff.worker.id)]).toEqual([true, true]);
      }, 30_000);
    } finally {
      await open.stop();
    }
    // ... then switches to on.
    app = await mode.start({
      AUTH_MODE: 'on',
      ADMIN_API_KEY,
      AUTH_JWKS_URL: jwks.url,
      AUTH_JWT_ISSUER: jwks.issuer,
      AUTH_KEY_REFRESH_MS: '500',
      AUTH_FAILURES_PER_SECOND: String(FAILURES_PER_SECOND),
      AUTH_FAILURES_BURST: String(FAILURES_BURST),
      // As behind the proxy: a request without X-Forwarded-For is still counted by its socket's address.
      TRUST_PROXY: '1',
      API_KEYS_PER_TENANT: String(KEYS_PER_TENANT),
    });
    const steadyKey = (await makeKey({ scope: 'ingest', user_id: 'tenant-steady', name: 'steady worker' })).body
      .key as string;
    const session = await call(
      app.url,
      'POST',
      '/api/sessions/',
      makeSessionBody({ user_id: 'tenant-steady' }),
      bearer(steadyKey),
    );
    expect(session.status).toBe(201);
    steady = new SteadyTenant(app.url, 'tenant-steady', session.body.id as string, bearer(steadyKey));
    steady.start();
  }, 120_000);

  afterAll(async () => {
    await steady?.stop();
    await app?.stop();
    await jwks?.close();
  });

  it('fetches a JWKS answering 500 a handful of times for 300 token requests, answers each 503 fast with Retry-After, and takes tokens again within the cooldown once it answers', async () => {
    jwks.failWith(500);
    const token = await jwks.token('tenant-dashboard');
    const before = jwks.fetches();
    const started = performance.now();
    const answers = await inWaves(300, 30, async () => {
      const sent = performance.now();
      const answer = await call(app.url, 'GET', '/api/costs/summary', undefined, bearer(token));
      return { status: answer.status, retryAfter: answer.headers.get('retry-after'), ms: performance.now() - sent };
    });
    const elapsedMs = performance.now() - started;
    const fetches = jwks.fetches() - before;
    expect(new Set(answers.map((answer) => answer.status))).toEqual(new Set([503]));
    expect(answers.filter((answer) => !/^[1-5]$/.test(answer.retryAfter ?? ''))).toEqual([]);
    // At most one fetch per cooldown, and one at the start.
    expect(fetches).toBeGreaterThanOrEqual(1);
    expect(fetches).toBeLessThanOrEqual(1 + Math.ceil(elapsedMs / JWKS_COOLDOWN_MS));
    const ms = answers.map((answer) => answer.ms).sort((a, b) => a - b);
    expect(ms[Math.floor(ms.length / 2)]).toBeLessThan(1_000);

    jwks.failWith(null);
    const back = Date.now();
    await eventually(
      async () => expect((await call(app.url, 'GET', '/api/costs/summary', undefined, bearer(token))).status).toBe(200),
      JWKS_COOLDOWN_MS + 5_000,
      250,
    );
    // Within the cooldown, plus the polling's and a loaded machine's slack.
    expect(Date.now() - back).toBeLessThan(JWKS_COOLDOWN_MS + 3_000);
  });

  it('refuses a token whose exp lies beyond 24 hours, or whose iat lies before them, saying which', async () => {
    const nowS = Math.floor(Date.now() / 1000);
    const summary = (token: string) => call(app.url, 'GET', '/api/costs/summary', undefined, bearer(token));
    const far = await summary(await jwks.token('tenant-dashboard', { expiresIn: nowS + 7 * 86_400 }));
    expect([far.status, far.body.detail]).toEqual([401, expect.stringMatching(/expires more than 86400 s from now/)]);
    const old = await summary(
      await jwks.token('tenant-dashboard', { issuedAt: nowS - 2 * 86_400, expiresIn: nowS + 600 }),
    );
    expect([old.status, old.body.detail]).toEqual([401, expect.stringMatching(/issued more than 86400 s ago/)]);
    expect((await summary(await jwks.token('tenant-dashboard', { expiresIn: '23h' }))).status).toBe(200);
  });

  it('refuses the keys made while AUTH_MODE=off, even to make keys, saying they must be re-issued; the CLI re-issues them and the new keys work', async () => {
    const refusal = /created while AUTH_MODE=off.*re-issue it \(npm run keys -- reissue-auth-off\)/;
    await eventually(async () => {
      const listing = await call(app.url, 'GET', '/api/admin/keys', undefined, bearer(madeWhileOff.admin.key));
      expect([listing.status, listing.body.detail]).toEqual([401, expect.stringMatching(refusal)]);
    }, 15_000);
    const escalation = await call(
      app.url,
      'POST',
      '/api/admin/keys',
      { scope: 'admin' },
      bearer(madeWhileOff.admin.key),
    );
    expect([escalation.status, escalation.body.detail]).toEqual([401, expect.stringMatching(refusal)]);
    const write = await call(
      app.url,
      'POST',
      '/api/sessions/',
      makeSessionBody({ user_id: 'tenant-off' }),
      bearer(madeWhileOff.worker.key),
    );
    expect([write.status, write.body.detail]).toEqual([401, expect.stringMatching(refusal)]);
    const listed = (
      await call<{ id: string; created_while_auth_off: boolean }[]>(
        app.url,
        'GET',
        '/api/admin/keys',
        undefined,
        BOOTSTRAP,
      )
    ).body;
    expect(
      listed
        .filter((key) => key.created_while_auth_off)
        .map((key) => key.id)
        .sort(),
    ).toEqual([madeWhileOff.admin.id, madeWhileOff.worker.id].sort());

    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['--import', 'tsx', 'infra/keys/cli.ts', 'reissue-auth-off'],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', CALLMETER_URL: app.url, CALLMETER_ADMIN_KEY: ADMIN_API_KEY } },
    );
    const reissued = JSON.parse(stdout) as {
      replaces: string;
      key: string;
      scope: string;
      user_id: string | null;
      created_while_auth_off: boolean;
    }[];
    const by = (id: string) => reissued.find((key) => key.replaces === id)!;
    expect(reissued.map((key) => [key.replaces, key.scope, key.user_id, key.created_while_auth_off]).sort()).toEqual(
      [
        [madeWhileOff.admin.id, 'admin', null, false],
        [madeWhileOff.worker.id, 'ingest', 'tenant-off', false],
      ].sort(),
    );
    expect(
      (await call(app.url, 'GET', '/api/admin/keys', undefined, bearer(by(madeWhileOff.admin.id).key))).status,
    ).toBe(200);
    const session = await call(
      app.url,
      'POST',
      '/api/sessions/',
      makeSessionBody({ user_id: 'tenant-off' }),
      bearer(by(madeWhileOff.worker.id).key),
    );
    expect(session.status).toBe(201);
    // The old secrets stay refused: revoked now.
    expect((await call(app.url, 'GET', '/api/admin/keys', undefined, bearer(madeWhileOff.admin.key))).body).toEqual({
      detail: 'Invalid, expired or revoked credential',
    });
  });

  it('answers a flood of bad credentials from one address 429 past its budget, before checking them, while its valid key and other addresses pass', async () => {
    const reader = (await makeKey({ scope: 'read', user_id: 'tenant-reader' })).body.key as string;
    const forged = await jwks.forged('tenant-reader');
    const bad = [
      bearer(`cm_live_${'A'.repeat(43)}`),
      bearer(forged),
      bearer('not.a.token'),
      { 'x-api-key': 'cm_live_guess1234567890' },
    ];
    const fetchesBefore = jwks.fetches();
    const started = performance.now();
    const answers = await inWaves(300, 30, (i) =>
      callFrom('127.0.0.2', app.url, 'GET', '/api/costs/summary', bad[i % bad.length]!),
    );
    const elapsedS = (performance.now() - started) / 1000;
    const statuses = answers.map((answer) => answer.status);
    const refusedAsInvalid = statuses.filter((status) => status === 401).length;
    expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
    expect(refusedAsInvalid).toBeGreaterThanOrEqual(FAILURES_BURST);
    expect(refusedAsInvalid).toBeLessThanOrEqual(FAILURES_BURST + Math.ceil(elapsedS * FAILURES_PER_SECOND) + 1);
    const limited = answers.filter((answer) => answer.status === 429);
    expect(limited.filter((answer) => !/^\d+$/.test(answer.retryAfter ?? ''))).toEqual([]);
    expect(JSON.parse(limited[0]!.text)).toEqual({
      detail: expect.stringMatching(/^Too many failed authentications from this address; retry after \d+ s$/),
    });
    expect(jwks.fetches()).toBe(fetchesBefore);
    // The flooded address's valid key still passes; another address's bad credential is still a plain 401.
    expect((await callFrom('127.0.0.2', app.url, 'GET', '/api/costs/summary', bearer(reader))).status).toBe(200);
    expect((await callFrom('127.0.0.1', app.url, 'GET', '/api/costs/summary', bad[0]!)).status).toBe(401);
  });

  it("counts apart the clients one proxy forwards (TRUST_PROXY): a flood from one leaves another its tries, whatever entries the client wrote before the proxy's", async () => {
    const proxy = '127.0.0.3';
    const bad = bearer(`cm_live_${'B'.repeat(43)}`);
    const through = (forwardedFor: string) =>
      callFrom(proxy, app.url, 'GET', '/api/costs/summary', { ...bad, 'x-forwarded-for': forwardedFor });
    const flood = await inWaves(FAILURES_BURST + 30, 30, () => through('203.0.113.1'));
    expect(flood.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
    expect((await through('203.0.113.2')).status).toBe(401);
    // The proxy appends the address it was reached from: an entry the client wrote before it is not its address.
    const spoofed = await inWaves(10, 10, () => through('203.0.113.3, 203.0.113.1'));
    expect(spoofed.filter((answer) => answer.status === 429).length).toBeGreaterThan(0);
  });

  it('refuses a tenant its API key past API_KEYS_PER_TENANT with a 409 until one is revoked', async () => {
    const made = [];
    for (let i = 0; i < KEYS_PER_TENANT; i += 1) {
      const answer = await makeKey({ scope: 'ingest', user_id: 'tenant-keys' });
      expect(answer.status).toBe(201);
      made.push(answer.body.id as string);
    }
    const refused = await makeKey({ scope: 'read', user_id: 'tenant-keys' });
    expect([refused.status, refused.body]).toEqual([
      409,
      {
        detail: `Tenant tenant-keys has ${KEYS_PER_TENANT} active API keys, the most API_KEYS_PER_TENANT allows: revoke one first`,
      },
    ]);
    expect((await makeKey({ scope: 'read', user_id: 'tenant-keys-neighbour' })).status).toBe(201);
    expect((await call(app.url, 'DELETE', `/api/admin/keys/${made[0]}`, undefined, BOOTSTRAP)).status).toBe(200);
    expect((await makeKey({ scope: 'read', user_id: 'tenant-keys' })).status).toBe(201);
  });

  it("answered the steady tenant's every request with a success throughout, and stays healthy", async () => {
    const requests = await steady.stop();
    expect(requests.length).toBeGreaterThan(10);
    expect(requests.filter((request) => request.status < 200 || request.status >= 300)).toEqual([]);
    for (const route of ['/healthz', '/readyz']) expect((await fetch(`${app.url}${route}`)).status).toBe(200);
  });
});
