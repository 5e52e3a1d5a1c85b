import type { FromSchema } from 'json-schema-to-ts';

/** The rights of a credential; see services/shared/auth/README.md for the routes each opens. */
export const API_KEY_SCOPES = ['ingest', 'read', 'admin'] as const;
export type ApiKeyScope = (typeof API_KEY_SCOPES)[number];

/**
 * An API key (POST /api/admin/keys), stored without its secret: only a salted SHA-256 of it. A
 * revocation is a new version of the same id with `revoked_at` set; the highest version wins.
 */
export const apiKeyRecordSchema = {
  $id: 'callmeter/records/api-key',
  type: 'object',
  additionalProperties: false,
  required: [
    'id',
    'prefix',
    'name',
    'scope',
    'user_id',
    'salt',
    'secret_hash',
    'created_at',
    'expires_at',
    'revoked_at',
    'created_by',
    'version',
  ],
  properties: {
    id: { type: 'string', format: 'uuid' },
    /** The key's first characters (`cm_live_` and 8 more), shown in listings and used to find the key. */
    prefix: { type: 'string', pattern: '^cm_live_[A-Za-z0-9_-]{8}$' },
    name: { type: ['string', 'null'], maxLength: 200 },
    scope: { enum: API_KEY_SCOPES },
    /** The one tenant the key may act for; null: any tenant (x-user-id says which). */
    user_id: { type: ['string', 'null'], minLength: 1, maxLength: 512 },
    salt: { type: 'string', pattern: '^[0-9a-f]{32}$' },
    secret_hash: { type: 'string', pattern: '^[0-9a-f]{64}$' },
    created_at: { type: 'string', format: 'date-time' },
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
    /** The id of the admin key that created it, or `bootstrap` (ADMIN_API_KEY). */
    created_by: { type: 'string', minLength: 1, maxLength: 64 },
    version: { type: 'integer', minimum: 1 },
    /**
     * Made by an anonymous caller while AUTH_MODE=off: refused with AUTH_MODE=on until re-issued
     * (`npm run keys -- reissue-auth-off`). Absent in records written before the mark existed,
     * where `created_by` `anonymous` says the same.
     */
    created_while_auth_off: { type: 'boolean' },
  },
} as const;

export type ApiKeyRecord = FromSchema<typeof apiKeyRecordSchema>;

export const AUDIT_ACTIONS = [
  'key_created',
  'key_revoked',
  'rate_created',
  'rate_ended',
  'period_closed',
  'period_reopened',
  'time_zone_set',
  'budget_created',
  'budget_updated',
  'budget_deleted',
  'webhook_created',
  'webhook_secret_rotated',
  'webhook_deleted',
  'webhook_disabled',
] as const;

/** One administrative change: who (the acting key's id), what, when. Written beside the change, on the record path. */
export const auditRecordSchema = {
  $id: 'callmeter/records/audit',
  type: 'object',
  additionalProperties: false,
  required: ['id', 'action', 'subject_id', 'actor_key_id', 'user_id', 'at', 'detail'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    action: { enum: AUDIT_ACTIONS },
    /** What changed: a key, rate entry, budget or webhook's id, a tenant (its settings) or a tenant's month (`user/YYYY-MM`). */
    subject_id: { type: 'string', minLength: 1, maxLength: 600 },
    actor_key_id: { type: 'string', minLength: 1, maxLength: 64 },
    /** The tenant the subject belongs to, when it has one. */
    user_id: { type: ['string', 'null'], maxLength: 512 },
    at: { type: 'string', format: 'date-time' },
    /** The change as JSON (never a secret). */
    detail: { type: 'string', maxLength: 65536 },
  },
} as const;

export type AuditRecord = FromSchema<typeof auditRecordSchema>;
