import { randomUUID } from 'node:crypto';
import type { apiKeySchema, KeyCreateBody } from '../../../schemas/http/admin.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import type { ApiKeyRecord } from '../../../schemas/records/api-key.ts';
import type { Caller } from '../../shared/auth/access.ts';
import { newSecret } from '../../shared/auth/api-keys.ts';
import { auditEnvelope } from '../../shared/auth/audit.ts';
import { createdWhileAuthOff, type KeyRegistry } from '../../shared/auth/key-registry.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import { AppError, type ValidationItem } from '../../shared/errors.ts';
import { makeEnvelope } from '../../domain/records/index.ts';
import type { RecordSink } from '../../domain/records/index.ts';
import { LATEST_STORED_MS } from '../../shared/validation/instant-window.ts';

export interface KeyServiceDeps {
  readonly keys: KeyRegistry;
  readonly sink: RecordSink;
  /** API_KEYS_PER_TENANT: active keys (neither revoked nor expired) one tenant may hold; the unbound keys count as one tenant. */
  readonly perTenant: number;
  readonly now?: () => number;
}

/** A key as listed (GET /api/admin/keys): everything but the salt and hash. */
export type ListedKey = WireOf<typeof apiKeySchema>;

const NOT_FOUND = 'Key not found';

/**
 * API keys: each created or revoked key is a durable record on the record path (api_keys), with its
 * audit record beside it, and known to this process at once (every other process reads it within
 * AUTH_KEY_REFRESH_MS). An admin key bound to a tenant manages that tenant's keys only.
 */
export function createKeyService({ keys, sink, perTenant, now = Date.now }: KeyServiceDeps) {
  async function publish(record: ApiKeyRecord, actor: Caller): Promise<void> {
    const at = new Date(now());
    const action = record.revoked_at === null ? 'key_created' : 'key_revoked';
    await sink.publish([
      makeEnvelope('api_key', `api_key:${record.id}`, record, at, at),
      auditEnvelope(
        { action, subject_id: record.id, actor, user_id: record.user_id, at, detail: listed(record) },
        `api_key:${record.id}`,
      ),
    ]);
    keys.remember(record);
  }

  return {
    async create(body: KeyCreateBody, actor: Caller): Promise<ListedKey & { key: string }> {
      if (body.user_id !== undefined) assertActsFor(actor.tenant, body.user_id, 'create keys');
      const nowMs = now();
      const expiresAtMs = body.expires_at?.getTime();
      // Past the latest instant stored, a key would read back from the history with another expiry.
      const expiryProblem =
        expiresAtMs === undefined
          ? null
          : expiresAtMs <= nowMs
            ? 'expires_at must be in the future'
            : expiresAtMs > LATEST_STORED_MS
              ? `expires_at is after ${new Date(LATEST_STORED_MS).toISOString()}, the latest instant stored (leave it out for a key that never expires)`
              : null;
      if (expiryProblem !== null) {
        const item: ValidationItem = {
          type: 'value_error',
          loc: ['body', 'expires_at'],
          msg: `Value error, ${expiryProblem}`,
          input: body.expires_at!.toISOString(),
          ctx: { error: {} },
        };
        throw AppError.validation([item]);
      }
      const userId = body.user_id ?? actor.tenant;
      // Checked against this process's copy: two processes creating at once may each pass with one left.
      if (keys.activeOf(userId, nowMs) >= perTenant)
        throw AppError.of(
          'CONFLICT',
          `${userId === null ? 'The unbound keys number' : `Tenant ${userId} has`} ${perTenant} active API keys, the most API_KEYS_PER_TENANT allows: revoke one first`,
        );
      const secret = newSecret();
      const record: ApiKeyRecord = {
        id: randomUUID(),
        prefix: secret.prefix,
        name: body.name ?? null,
        scope: body.scope,
        user_id: userId,
        salt: secret.salt,
        secret_hash: secret.secretHash,
        created_at: new Date(nowMs).toISOString(),
        expires_at: body.expires_at?.toISOString() ?? null,
        revoked_at: null,
        created_by: actor.id,
        created_while_auth_off: actor.kind === 'anonymous',
        version: 1,
      };
      await publish(record, actor);
      return { ...listed(record), key: secret.key };
    },

    list(actor: Caller): ListedKey[] {
      return keys
        .all()
        .filter((key) => actor.tenant === null || key.user_id === actor.tenant)
        .map(listed);
    },

    /** Revoked at once in this process, in every other within AUTH_KEY_REFRESH_MS; revoking twice answers the first revocation. */
    async revoke(id: string, actor: Caller): Promise<ListedKey> {
      const key = keys.latest(id);
      if (key === null || (actor.tenant !== null && key.user_id !== actor.tenant))
        throw AppError.of('NOT_FOUND', NOT_FOUND);
      if (key.revoked_at !== null) return listed(key);
      const revoked: ApiKeyRecord = { ...key, revoked_at: new Date(now()).toISOString(), version: key.version + 1 };
      await publish(revoked, actor);
      return listed(revoked);
    },
  };
}

export type KeyService = ReturnType<typeof createKeyService>;

function listed({ salt: _salt, secret_hash: _hash, version: _version, ...key }: ApiKeyRecord): ListedKey {
  return { ...key, created_while_auth_off: createdWhileAuthOff(key) };
}
