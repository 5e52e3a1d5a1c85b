import { createRemoteJWKSet, jwtVerify, type JWTVerifyGetKey } from 'jose';
import type { AuthConfig } from '../config.ts';

/** After a token names a signing key the JWKS lacked, the set is fetched again no sooner than this (jose's cooldown). */
const JWKS_COOLDOWN_MS = 5_000;
/** A JWKS is fetched again at least this often, so a key the issuer removed stops verifying. */
const JWKS_MAX_AGE_MS = 10 * 60_000;

export type TokenCheck =
  { readonly kind: 'valid'; readonly tenant: string } | { readonly kind: 'invalid'; readonly reason: string };

export interface TokenVerifier {
  verify(token: string): Promise<TokenCheck>;
}

/** Dashboards' user tokens: a JWT signed by a key of the JWKS, from the issuer (and audience) configured, not expired. */
export function createTokenVerifier(
  jwt: NonNullable<AuthConfig['jwt']>,
  keys: JWTVerifyGetKey = createRemoteJWKSet(new URL(jwt.jwksUrl), {
    cooldownDuration: JWKS_COOLDOWN_MS,
    cacheMaxAge: JWKS_MAX_AGE_MS,
  }),
): TokenVerifier {
  return {
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: jwt.issuer,
          ...(jwt.audience === null ? {} : { audience: jwt.audience }),
          clockTolerance: jwt.clockToleranceS,
          requiredClaims: ['exp'],
        });
        const tenant = payload[jwt.tenantClaim];
        if (typeof tenant !== 'string' || tenant === '')
          return { kind: 'invalid', reason: `the token has no ${jwt.tenantClaim} claim` };
        return { kind: 'valid', tenant };
      } catch (error) {
        return { kind: 'invalid', reason: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}
