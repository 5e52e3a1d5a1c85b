import { createRemoteJWKSet, customFetch, exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';
import { beforeAll, describe, expect, it } from 'vitest';
import { createTokenVerifier, guardedJwks, JWKS_COOLDOWN_MS, type TokenCheck } from './user-tokens.ts';

const DAY_S = 86_400;
const ISSUER = 'https://issuer.callmeter.test';
const JWKS_URL = 'https://issuer.callmeter.test/.well-known/jwks.json';
const CONFIG = {
  jwksUrl: JWKS_URL,
  issuer: ISSUER,
  audience: null,
  tenantClaim: 'sub',
  clockToleranceS: 30,
  maxAgeMs: DAY_S * 1000,
};

/** The identity provider's side, as the port jose fetches through: its answers and how often it was asked. */
class FakeIssuer {
  status = 200;
  fetches = 0;
  private privateKey!: CryptoKey;
  private jwk!: JWK;

  async init(): Promise<void> {
    const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
    this.privateKey = privateKey;
    this.jwk = { ...(await exportJWK(publicKey)), kid: 'key-1', alg: 'ES256', use: 'sig' };
  }

  readonly fetch = async (): Promise<Response> => {
    this.fetches += 1;
    // A turn of the event loop, as a real answer takes: concurrent tokens find the fetch still pending.
    await new Promise((resolve) => setImmediate(resolve));
    return new Response(JSON.stringify(this.status === 200 ? { keys: [this.jwk] } : { error: 'down' }), {
      status: this.status,
      headers: { 'content-type': 'application/json' },
    });
  };

  jwks(): ReturnType<typeof createRemoteJWKSet> {
    return createRemoteJWKSet(new URL(JWKS_URL), { cooldownDuration: JWKS_COOLDOWN_MS, [customFetch]: this.fetch });
  }

  token(claims: { exp: number; iat?: number }): Promise<string> {
    const jwt = new SignJWT({ sub: 'tenant-a' })
      .setProtectedHeader({ alg: 'ES256', kid: 'key-1' })
      .setIssuer(ISSUER)
      .setExpirationTime(claims.exp);
    return (claims.iat === undefined ? jwt.setIssuedAt() : jwt.setIssuedAt(claims.iat)).sign(this.privateKey);
  }
}

describe('user tokens', () => {
  const issuer = new FakeIssuer();
  const nowS = () => Math.floor(Date.now() / 1000);

  beforeAll(() => issuer.init());

  it('fetches a JWKS answering 500 at most once per cooldown, answers every token unavailable with the wait, and verifies again once it answers', async () => {
    issuer.status = 500;
    issuer.fetches = 0;
    let clock = 1_000_000;
    const verifier = createTokenVerifier(
      CONFIG,
      guardedJwks(issuer.jwks(), JWKS_COOLDOWN_MS, () => clock),
    );
    const token = await issuer.token({ exp: nowS() + 600 });

    const concurrent = await Promise.all(Array.from({ length: 300 }, () => verifier.verify(token)));
    clock += 1_000;
    const after: TokenCheck[] = [];
    for (let i = 0; i < 300; i += 1) after.push(await verifier.verify(token));

    expect(issuer.fetches).toBe(1);
    expect(new Set([...concurrent, ...after].map((check) => check.kind))).toEqual(new Set(['unavailable']));
    expect(after[0]).toMatchObject({ kind: 'unavailable', retryAfterMs: JWKS_COOLDOWN_MS - 1_000 });

    issuer.status = 200;
    expect((await verifier.verify(token)).kind).toBe('unavailable');
    clock += JWKS_COOLDOWN_MS;
    expect(await verifier.verify(token)).toEqual({ kind: 'valid', tenant: 'tenant-a' });
    expect(issuer.fetches).toBe(2);
  });

  it('refuses a token whose exp lies beyond the horizon, or whose iat lies before it, saying which', async () => {
    issuer.status = 200;
    const verifier = createTokenVerifier(CONFIG, guardedJwks(issuer.jwks()));
    const far = await verifier.verify(await issuer.token({ exp: nowS() + 2 * DAY_S }));
    expect(far).toMatchObject({ kind: 'invalid', detail: expect.stringMatching(/expires more than 86400 s from now/) });
    const old = await verifier.verify(await issuer.token({ iat: nowS() - DAY_S - 3_600, exp: nowS() + 600 }));
    expect(old).toMatchObject({ kind: 'invalid', detail: expect.stringMatching(/issued more than 86400 s ago/) });
    const within = await verifier.verify(await issuer.token({ iat: nowS() - 3_600, exp: nowS() + DAY_S - 3_600 }));
    expect(within).toEqual({ kind: 'valid', tenant: 'tenant-a' });
  });
});
