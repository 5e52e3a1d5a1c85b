import { describe, expect, it } from 'vitest';
import type { ClickHouse } from '../clickhouse/client.ts';
import { AppError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { newSecret } from './api-keys.ts';
import { credentialAuthenticator } from './authenticator.ts';
import { KeyRegistry } from './key-registry.ts';
import { FailedAuthLimiter } from './rate-limits.ts';
import type { TokenCheck, TokenVerifier } from './user-tokens.ts';

const T0 = Date.parse('2026-11-26T12:00:00Z');

function keyOf(registry: KeyRegistry, createdBy: string, createdWhileAuthOff?: boolean): string {
  const secret = newSecret();
  registry.remember({
    id: crypto.randomUUID(),
    prefix: secret.prefix,
    name: null,
    scope: 'ingest',
    user_id: 'tenant-a',
    salt: secret.salt,
    secret_hash: secret.secretHash,
    created_at: new Date(T0).toISOString(),
    expires_at: null,
    revoked_at: null,
    created_by: createdBy,
    ...(createdWhileAuthOff === undefined ? {} : { created_while_auth_off: createdWhileAuthOff }),
    version: 1,
  });
  return secret.key;
}

function setup(answer: TokenCheck = { kind: 'valid', tenant: 'tenant-a' }) {
  // Never started: the keys remembered are known without reading ClickHouse.
  const keys = new KeyRegistry(null as unknown as ClickHouse, 60_000, createLogger('silent'));
  let clock = T0;
  const verified: string[] = [];
  const tokens: TokenVerifier = {
    verify: async (token) => {
      verified.push(token);
      return answer;
    },
  };
  const authenticator = credentialAuthenticator({
    adminKey: null,
    keys,
    tokens,
    log: createLogger('silent'),
    failures: new FailedAuthLimiter({ name: 'failed-auth', perSecond: 2, burst: 5 }),
    now: () => clock,
  });
  const as = (credential: string, source = '10.0.0.1') =>
    authenticator
      .authenticate({ authorization: `Bearer ${credential}` }, source)
      .then((caller) => ({ status: 200, caller, detail: '', retryAfter: undefined as string | undefined }))
      .catch((error: unknown) => {
        if (!(error instanceof AppError)) throw error;
        const status = { UNAUTHORIZED: 401, TOO_MANY_REQUESTS: 429, DEPENDENCY_UNAVAILABLE: 503 }[error.code as string];
        return { status: status ?? 0, caller: null, detail: error.message, retryAfter: error.headers['Retry-After'] };
      });
  return { keys, verified, as, tick: (ms: number) => (clock += ms) };
}

describe('the credential authenticator', () => {
  it('refuses a key made while AUTH_MODE=off with a 401 saying it must be re-issued, and takes the key that replaces it', async () => {
    const { keys, as } = setup();
    const marked = keyOf(keys, 'anonymous', true);
    const before = keyOf(keys, 'anonymous');
    const reissued = keyOf(keys, 'bootstrap', false);
    // More often than the address's budget of failures: each answer still says why.
    for (const key of [marked, before, marked, before, marked, before, marked]) {
      const refused = await as(key);
      expect([refused.status, refused.detail]).toEqual([
        401,
        expect.stringMatching(/created while AUTH_MODE=off.*re-issue/),
      ]);
    }
    expect(await as(reissued)).toMatchObject({ status: 200, caller: { kind: 'key', tenant: 'tenant-a' } });
  });

  it('answers an address past its failed authentications 429 before checking a token, while its valid key and other addresses pass', async () => {
    const { keys, verified, as, tick } = setup({ kind: 'invalid', reason: 'bad signature' });
    const valid = keyOf(keys, 'bootstrap', false);
    const bad = `cm_live_${'x'.repeat(43)}`;
    const statuses = [];
    for (let i = 0; i < 8; i += 1) statuses.push((await as(i % 2 === 0 ? bad : 'a.b.c')).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(verified).toHaveLength(2);
    expect((await as('a.b.c')).retryAfter).toBe('1');
    expect((await as(valid)).status).toBe(200);
    expect((await as(bad, '10.0.0.2')).status).toBe(401);
    tick(500);
    expect((await as('a.b.c')).status).toBe(401);
    expect((await as('a.b.c')).status).toBe(429);
  });

  it('counts the token checks still in flight against the budget, and gives a good token its try back', async () => {
    const { verified, as } = setup({ kind: 'invalid', reason: 'bad signature' });
    const statuses = (await Promise.all(Array.from({ length: 8 }, () => as('a.b.c')))).map((answer) => answer.status);
    expect(statuses.sort()).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(verified).toHaveLength(5);
    const good = setup();
    const answers = [];
    for (let i = 0; i < 20; i += 1) answers.push((await good.as('a.b.c')).status);
    expect(new Set(answers)).toEqual(new Set([200]));
  });

  it('refuses no good token for the good ones in flight beside it, past the budget, while a bad one past it is still 429 unchecked', async () => {
    // A slow JWKS fetch: every token waits for it, as they do while the issuer's set is refreshed.
    let fetched!: () => void;
    const fetch = new Promise<void>((resolve) => (fetched = resolve));
    const verified: string[] = [];
    const authenticator = credentialAuthenticator({
      adminKey: null,
      keys: new KeyRegistry(null as unknown as ClickHouse, 60_000, createLogger('silent')),
      tokens: {
        verify: async (token) => {
          verified.push(token);
          await fetch;
          return token === 'good' ? { kind: 'valid', tenant: 'tenant-a' } : { kind: 'invalid', reason: 'bad' };
        },
      },
      log: createLogger('silent'),
      failures: new FailedAuthLimiter({ name: 'failed-auth', perSecond: 2, burst: 5 }),
      now: () => T0,
    });
    const statusOf = (token: string) =>
      authenticator.authenticate({ authorization: `Bearer ${token}` }, '10.0.0.1').then(
        () => 200,
        (error: unknown) => (error instanceof AppError && error.code === 'TOO_MANY_REQUESTS' ? 429 : 401),
      );
    const good = Array.from({ length: 12 }, () => statusOf('good'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    fetched();
    expect(await Promise.all(good)).toEqual(Array.from({ length: 12 }, () => 200));
    expect(verified).toHaveLength(12);
    const bad = await Promise.all(Array.from({ length: 8 }, () => statusOf('bad')));
    expect(bad.sort()).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
    expect(verified).toHaveLength(17);
  });

  it('answers a token 503 with Retry-After while the JWKS cannot be fetched, without counting a failure', async () => {
    const { as } = setup({ kind: 'unavailable', reason: 'Expected 200 OK', retryAfterMs: 3_200 });
    const answers = [];
    for (let i = 0; i < 8; i += 1) answers.push(await as('a.b.c'));
    expect(new Set(answers.map((answer) => [answer.status, answer.retryAfter].join()))).toEqual(new Set(['503,4']));
  });
});
