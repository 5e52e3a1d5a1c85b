import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { ANONYMOUS, type Caller } from './access.ts';
import { looksLikeKey, sameSecret } from './api-keys.ts';
import type { KeyRegistry } from './key-registry.ts';
import { FailedAuthLimiter } from './rate-limits.ts';
import type { TokenCheck, TokenVerifier } from './user-tokens.ts';

export interface Authenticator {
  /**
   * The caller of a request, from its headers; 401 when no valid credential is sent (AUTH_MODE=on),
   * 429 when `source` (the peer's address) has failed too often to have a costly credential checked.
   */
  authenticate(headers: Readonly<Record<string, string | string[] | undefined>>, source: string): Promise<Caller>;
}

/** AUTH_MODE=off: no credential is read; every request is today's anonymous caller. */
export const OPEN: Authenticator = { authenticate: async () => ANONYMOUS };

export interface CredentialDeps {
  readonly adminKey: string | null;
  readonly keys: KeyRegistry;
  readonly tokens: TokenVerifier | null;
  readonly log: Logger;
  /** Failed authentications by source address; none: unlimited. */
  readonly failures?: FailedAuthLimiter;
  readonly now?: () => number;
}

const NOT_AUTHENTICATED = () =>
  AppError.of('UNAUTHORIZED', 'Not authenticated', { headers: { 'WWW-Authenticate': 'Bearer' } });
const INVALID = (detail = 'Invalid, expired or revoked credential') =>
  AppError.of('UNAUTHORIZED', detail, { headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' } });
const MADE_WHILE_OFF =
  'This API key was created while AUTH_MODE=off, by a caller that was not authenticated, and is refused with AUTH_MODE=on: an administrator must re-issue it (npm run keys -- reissue-auth-off)';
const TOO_MANY_FAILURES = (retryAfterMs: number) => {
  const seconds = String(Math.max(1, Math.ceil(retryAfterMs / 1000)));
  return AppError.of(
    'TOO_MANY_REQUESTS',
    `Too many failed authentications from this address; retry after ${seconds} s`,
    { headers: { 'Retry-After': seconds } },
  );
};

/** AUTH_MODE=on: an API key (`Authorization: Bearer cm_live_…` or `x-api-key`), ADMIN_API_KEY, or a user token. */
export function credentialAuthenticator({
  adminKey,
  keys,
  tokens,
  log,
  failures = new FailedAuthLimiter(null),
  now = Date.now,
}: CredentialDeps): Authenticator {
  /** A credential about to be refused takes a try of its address; none left: 429. */
  const takeTry = (source: string) => {
    const retryAfterMs = failures.take(source, now());
    if (retryAfterMs !== null) throw TOO_MANY_FAILURES(retryAfterMs);
  };
  return {
    async authenticate(headers, source) {
      const credential = credentialOf(headers);
      if (credential === null) throw NOT_AUTHENTICATED();
      if (adminKey !== null && sameSecret(adminKey, credential))
        return { kind: 'bootstrap', id: 'bootstrap', scope: 'admin', tenant: null };
      if (looksLikeKey(credential)) {
        const found = keys.lookup(credential, now());
        // A valid key is never limited: its check is a hash lookup, and a worker sharing an address with an attacker keeps working.
        if (found.kind === 'valid')
          return { kind: 'key', id: found.key.id, scope: found.key.scope, tenant: found.key.user_id };
        // Not counted as a failure: the key is one of ours, and its holder (a worker not yet given its
        // re-issued key) should keep reading why it is refused rather than a 429.
        if (found.kind === 'auth_off') {
          log.warn({ key_id: found.key.id }, 'api_key_made_while_auth_off_refused');
          throw INVALID(MADE_WHILE_OFF);
        }
        takeTry(source);
        throw INVALID();
      }
      if (tokens === null) {
        takeTry(source);
        throw INVALID();
      }
      // Reserved before the check, so that a flood of bad tokens in flight is refused before it is checked;
      // a good token gives its try back, and waits rather than being refused for good ones in flight.
      const retryAfterMs = await failures.reserve(source, now);
      if (retryAfterMs !== null) throw TOO_MANY_FAILURES(retryAfterMs);
      let token: TokenCheck | undefined;
      try {
        token = await tokens.verify(credential);
      } finally {
        failures.settle(source, token === undefined || token.kind === 'invalid');
      }
      if (token.kind === 'unavailable') {
        log.warn({ reason: token.reason }, 'user_token_unchecked: the JWKS could not be fetched');
        const seconds = String(Math.max(1, Math.ceil(token.retryAfterMs / 1000)));
        throw AppError.of(
          'DEPENDENCY_UNAVAILABLE',
          `User tokens cannot be checked now: the issuer's JWKS could not be fetched; retry after ${seconds} s`,
          { headers: { 'Retry-After': seconds } },
        );
      }
      if (token.kind === 'invalid') {
        // The reason (expired, bad signature, wrong issuer) helps an operator; the client learns only "invalid",
        // unless the verifier gave a detail it may see (a token good for longer than this service allows).
        log.info({ reason: token.reason }, 'user_token_refused');
        throw INVALID(token.detail);
      }
      return { kind: 'token', id: `token:${token.tenant}`, scope: 'read', tenant: token.tenant };
    },
  };
}

function credentialOf(headers: Readonly<Record<string, string | string[] | undefined>>): string | null {
  const authorization = single(headers.authorization);
  if (authorization !== null) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match !== null) return match[1]!;
  }
  return single(headers['x-api-key']);
}

function single(value: string | string[] | undefined): string | null {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined || first.trim() === '' ? null : first.trim();
}
