import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK } from 'jose';

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly jwk: JWK;
}

/** An identity provider's JWKS, served by the test: it signs user tokens and rotates its keys. */
export interface JwksServer {
  readonly url: string;
  readonly issuer: string;
  /**
   * A token of `tenant` signed with the current key; `expiresIn` and `issuedAt` as jose takes them
   * (default 10m and now).
   */
  token(
    tenant: string,
    options?: { readonly expiresIn?: string | number; readonly issuer?: string; readonly issuedAt?: number },
  ): Promise<string>;
  /** A token of `tenant` whose kid is the current key's but whose signature is another key's. */
  forged(tenant: string): Promise<string>;
  /** A new current key; the JWKS then lists only it. */
  rotate(): Promise<void>;
  /** From now on the JWKS is answered with this status and no keys; null: answered normally again. */
  failWith(status: number | null): void;
  /** How many times the JWKS has been fetched. */
  fetches(): number;
  close(): Promise<void>;
}

export async function startJwksServer(issuer = 'https://issuer.callmeter.test'): Promise<JwksServer> {
  let current = await newKey(1);
  let generation = 1;
  let failing: number | null = null;
  let fetches = 0;
  const server: Server = createServer((request, response) => {
    fetches += 1;
    response.setHeader('content-type', 'application/json');
    if (failing !== null) response.statusCode = failing;
    response.end(JSON.stringify(failing === null ? { keys: [current.jwk] } : { error: 'unavailable' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const sign = (key: SigningKey, tenant: string, expiresIn: string | number, iss: string, issuedAt?: number) =>
    new SignJWT({ sub: tenant })
      .setProtectedHeader({ alg: 'ES256', kid: key.kid })
      .setIssuer(iss)
      .setIssuedAt(issuedAt)
      .setExpirationTime(expiresIn)
      .sign(key.privateKey);
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/.well-known/jwks.json`,
    issuer,
    token: (tenant, options = {}) =>
      sign(current, tenant, options.expiresIn ?? '10m', options.issuer ?? issuer, options.issuedAt),
    forged: async (tenant) => sign({ ...(await newKey(0)), kid: current.kid }, tenant, '10m', issuer),
    rotate: async () => {
      generation += 1;
      current = await newKey(generation);
    },
    failWith: (status) => {
      failing = status;
    },
    fetches: () => fetches,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function newKey(generation: number): Promise<SigningKey> {
  const { privateKey, publicKey } = await generateKeyPair('ES256', { extractable: true });
  const kid = `key-${generation}-${Math.random().toString(36).slice(2, 8)}`;
  return { kid, privateKey, jwk: { ...(await exportJWK(publicKey)), kid, alg: 'ES256', use: 'sig' } };
}
