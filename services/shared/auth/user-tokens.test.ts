import { createRemoteJWKSet } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startJwksServer, type JwksServer } from '../../../test/support/jwks-server.ts';
import { createTokenVerifier, guardedJwks, JWKS_COOLDOWN_MS, type TokenCheck } from './user-tokens.ts';

const DAY_S = 86_400;

describe('user tokens against a local JWKS server', () => {
  let jwks: JwksServer;
  const config = () => ({
    jwksUrl: jwks.url,
    issuer: jwks.issuer,
    audience: null,
    tenantClaim: 'sub',
    clockToleranceS: 30,
    maxAgeMs: DAY_S * 1000,
  });

  beforeAll(async () => {
    jwks = await startJwksServer();
  });

  afterAll(async () => {
    await jwks?.close();
  });

  it('fetches a JWKS answering 500 at most once per cooldown, answers every token unavailable with the wait, and verifies again once it answers', async () => {
    jwks.failWith(500);
    let clock = 1_000_000;
    const remote = createRemoteJWKSet(new URL(jwks.url), { cooldownDuration: JWKS_COOLDOWN_MS });
    const verifier = createTokenVerifier(
      config(),
      guardedJwks(remote, JWKS_COOLDOWN_MS, () => clock),
    );
    const token = await jwks.token('tenant-a');
    const before = jwks.fetches();

    const concurrent = await Promise.all(Array.from({ length: 300 }, () => verifier.verify(token)));
    clock += 1_000;
    const after: TokenCheck[] = [];
    for (let i = 0; i < 300; i += 1) after.push(await verifier.verify(token));

    expect(jwks.fetches() - before).toBe(1);
    expect(new Set([...concurrent, ...after].map((check) => check.kind))).toEqual(new Set(['unavailable']));
    expect(after[0]).toMatchObject({ kind: 'unavailable', retryAfterMs: JWKS_COOLDOWN_MS - 1_000 });

    jwks.failWith(null);
    expect((await verifier.verify(token)).kind).toBe('unavailable');
    clock += JWKS_COOLDOWN_MS;
    expect(await verifier.verify(token)).toEqual({ kind: 'valid', tenant: 'tenant-a' });
    expect(jwks.fetches() - before).toBe(2);
  });

  it('refuses a token whose exp lies beyond the horizon, or whose iat lies before it, saying which', async () => {
    const verifier = createTokenVerifier(config());
    const nowS = Math.floor(Date.now() / 1000);
    const far = await verifier.verify(await jwks.token('tenant-a', { expiresIn: nowS + 2 * DAY_S }));
    expect(far).toMatchObject({ kind: 'invalid', detail: expect.stringMatching(/expires more than 86400 s from now/) });
    const old = await verifier.verify(
      await jwks.token('tenant-a', { issuedAt: nowS - DAY_S - 3_600, expiresIn: nowS + 600 }),
    );
    expect(old).toMatchObject({ kind: 'invalid', detail: expect.stringMatching(/issued more than 86400 s ago/) });
    const within = await verifier.verify(
      await jwks.token('tenant-a', { issuedAt: nowS - 3_600, expiresIn: nowS + DAY_S - 3_600 }),
    );
    expect(within).toEqual({ kind: 'valid', tenant: 'tenant-a' });
  });
});
