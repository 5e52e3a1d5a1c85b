import {
  createLocalJWKSet,
  createRemoteJWKSet,
  jwtVerify,
  type FlattenedJWSInput,
  type JWSHeaderParameters,
  type JWTVerifyGetKey,
} from 'jose';
import type { AuthConfig } from '../config.ts';

/** The JWKS is fetched at most this often per issuer, whether the last fetch succeeded (jose's cooldown) or failed (ours). */
export const JWKS_COOLDOWN_MS = 5_000;
/** A JWKS is fetched again at least this often, so a key the issuer removed stops verifying. */
const JWKS_MAX_AGE_MS = 10 * 60_000;

export type TokenCheck =
  | { readonly kind: 'valid'; readonly tenant: string }
  /** `detail`: what the client may be told; without it, only that the credential is invalid. */
  | { readonly kind: 'invalid'; readonly reason: string; readonly detail?: string }
  /** The JWKS could not be fetched: the token can be checked neither way, so it is not refused as invalid. */
  | { readonly kind: 'unavailable'; readonly reason: string; readonly retryAfterMs: number };

export interface TokenVerifier {
  verify(token: string): Promise<TokenCheck>;
}

/** What a key resolver's caller gets while the JWKS cannot be fetched. */
export class JwksUnavailable extends Error {
  constructor(
    readonly retryAfterMs: number,
    options?: { cause?: unknown },
  ) {
    super('the JWKS could not be fetched', options);
    this.name = 'JwksUnavailable';
  }
}

// jose's errors of a resolver that are the token's (its kid, its alg), not the fetch's.
const TOKEN_FAULTS = new Set(['ERR_JWKS_NO_MATCHING_KEY', 'ERR_JWKS_MULTIPLE_MATCHING_KEYS', 'ERR_JOSE_NOT_SUPPORTED']);

type RemoteJwks = ReturnType<typeof createRemoteJWKSet>;

/**
 * jose's remote set, with a cooldown after a failed fetch too. jose waits `cooldownDuration` only
 * after a fetch that succeeded and fetches again on the next token after one that failed, so a
 * failing JWKS would be fetched once per request: this keeps the time of the last failure and,
 * until a cooldown has passed since, answers from the set last fetched while it is fresh and
 * otherwise throws JwksUnavailable without fetching. Concurrent tokens share one fetch (jose's).
 */
export function guardedJwks(
  remote: RemoteJwks,
  cooldownMs = JWKS_COOLDOWN_MS,
  now: () => number = Date.now,
): JWTVerifyGetKey {
  let failedAt: number | null = null;
  const unavailable = (cause?: unknown) =>
    new JwksUnavailable(Math.max(0, (failedAt ?? now()) + cooldownMs - now()), { cause });
  return async (header: JWSHeaderParameters, token: FlattenedJWSInput) => {
    if (failedAt !== null && now() - failedAt < cooldownMs && !remote.reloading) {
      const last = remote.jwks();
      if (!remote.fresh || last === undefined) throw unavailable();
      try {
        return await createLocalJWKSet(last)(header, token);
      } catch (error) {
        // A kid the last set lacks may be a new key of the issuer's: that needs the fetch that is failing.
        if ((error as { code?: string }).code === 'ERR_JWKS_NO_MATCHING_KEY') throw unavailable(error);
        throw error;
      }
    }
    try {
      const key = await remote(header, token);
      failedAt = null;
      return key;
    } catch (error) {
      if (TOKEN_FAULTS.has((error as { code?: string }).code ?? '')) throw error;
      failedAt = now();
      throw unavailable(error);
    }
  };
}

/**
 * Dashboards' user tokens: a JWT signed by a key of the JWKS, from the issuer (and audience)
 * configured, not expired, and good for no longer than `maxAgeMs` (neither `exp` further ahead
 * nor `iat` further back).
 */
export function createTokenVerifier(
  jwt: NonNullable<AuthConfig['jwt']>,
  keys: JWTVerifyGetKey = guardedJwks(
    createRemoteJWKSet(new URL(jwt.jwksUrl), { cooldownDuration: JWKS_COOLDOWN_MS, cacheMaxAge: JWKS_MAX_AGE_MS }),
  ),
  now: () => number = Date.now,
): TokenVerifier {
  const horizonS = Math.floor(jwt.maxAgeMs / 1000);
  return {
    async verify(token) {
      try {
        const { payload } = await jwtVerify(token, keys, {
          issuer: jwt.issuer,
          ...(jwt.audience === null ? {} : { audience: jwt.audience }),
          clockTolerance: jwt.clockToleranceS,
          requiredClaims: ['exp'],
          currentDate: new Date(now()),
        });
        // By hand, not jose's maxTokenAge: that one requires `iat`, and checks nothing of `exp`.
        const nowS = now() / 1000;
        if (payload.exp! - nowS > horizonS + jwt.clockToleranceS)
          return {
            kind: 'invalid',
            reason: 'exp_beyond_horizon',
            detail: `Token refused: it expires more than ${horizonS} s from now (AUTH_TOKEN_MAX_AGE_SECONDS); ask the issuer for a shorter-lived token`,
          };
        if (payload.iat !== undefined && nowS - payload.iat > horizonS + jwt.clockToleranceS)
          return {
            kind: 'invalid',
            reason: 'iat_beyond_horizon',
            detail: `Token refused: it was issued more than ${horizonS} s ago (AUTH_TOKEN_MAX_AGE_SECONDS); sign in again`,
          };
        const tenant = payload[jwt.tenantClaim];
        if (typeof tenant !== 'string' || tenant === '')
          return { kind: 'invalid', reason: `the token has no ${jwt.tenantClaim} claim` };
        return { kind: 'valid', tenant };
      } catch (error) {
        if (error instanceof JwksUnavailable)
          return {
            kind: 'unavailable',
            reason: error.cause instanceof Error ? error.cause.message : 'JWKS fetch failed recently',
            retryAfterMs: error.retryAfterMs,
          };
        return { kind: 'invalid', reason: error instanceof Error ? error.message : String(error) };
      }
    },
  };
}
