import { AppError } from '../errors.ts';
import type { Logger } from '../logger.ts';
import { ANONYMOUS, type Caller } from './access.ts';
import { looksLikeKey, sameSecret } from './api-keys.ts';
import type { KeyRegistry } from './key-registry.ts';
import type { TokenVerifier } from './user-tokens.ts';

export interface Authenticator {
  /** The caller of a request, from its headers; 401 when no valid credential is sent (AUTH_MODE=on). */
  authenticate(headers: Readonly<Record<string, string | string[] | undefined>>): Promise<Caller>;
}

/** AUTH_MODE=off: no credential is read; every request is today's anonymous caller. */
export const OPEN: Authenticator = { authenticate: async () => ANONYMOUS };

export interface CredentialDeps {
  readonly adminKey: string | null;
  readonly keys: KeyRegistry;
  readonly tokens: TokenVerifier | null;
  readonly log: Logger;
  readonly now?: () => number;
}

const NOT_AUTHENTICATED = () =>
  AppError.of('UNAUTHORIZED', 'Not authenticated', { headers: { 'WWW-Authenticate': 'Bearer' } });
const INVALID = () =>
  AppError.of('UNAUTHORIZED', 'Invalid, expired or revoked credential', {
    headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
  });

/** AUTH_MODE=on: an API key (`Authorization: Bearer cm_live_…` or `x-api-key`), ADMIN_API_KEY, or a user token. */
export function credentialAuthenticator({
  adminKey,
  keys,
  tokens,
  log,
  now = Date.now,
}: CredentialDeps): Authenticator {
  return {
    async authenticate(headers) {
      const credential = credentialOf(headers);
      if (credential === null) throw NOT_AUTHENTICATED();
      if (adminKey !== null && sameSecret(adminKey, credential))
        return { kind: 'bootstrap', id: 'bootstrap', scope: 'admin', tenant: null };
      if (looksLikeKey(credential)) {
        const found = keys.lookup(credential, now());
        if (found.kind !== 'valid') throw INVALID();
        return { kind: 'key', id: found.key.id, scope: found.key.scope, tenant: found.key.user_id };
      }
      if (tokens === null) throw INVALID();
      const token = await tokens.verify(credential);
      if (token.kind === 'invalid') {
        // The reason (expired, bad signature, wrong issuer) helps an operator; the client learns only "invalid".
        log.info({ reason: token.reason }, 'user_token_refused');
        throw INVALID();
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
