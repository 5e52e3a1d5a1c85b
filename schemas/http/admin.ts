import type { ModelSchema } from '../../services/shared/validation/schema-dialect.ts';
import type { FromPySchema } from '../../services/shared/validation/schema-types.ts';
import { API_KEY_SCOPES, AUDIT_ACTIONS } from '../records/api-key.ts';

/** POST /api/admin/keys — a new API key; its secret is in the 201 and nowhere else, ever. */
export const keyCreateBody = {
  type: 'object',
  title: 'ApiKeyCreate',
  properties: {
    name: { 'x-py': 'str', maxLength: 200, description: 'what the key is for (shown in listings)' },
    scope: {
      'x-py': 'literal',
      enum: API_KEY_SCOPES,
      description: 'ingest: workers; read: dashboards and finance; admin: everything',
    },
    user_id: {
      'x-py': 'str',
      minLength: 1,
      maxLength: 512,
      description: 'bind the key to this one tenant; default: any tenant',
    },
    expires_at: { 'x-py': 'datetime', description: 'default: never' },
  },
  required: ['scope'],
} as const satisfies ModelSchema;

export type KeyCreateBody = FromPySchema<typeof keyCreateBody>;

/** GET /api/admin/audit — newest first. */
export const auditQuery = {
  type: 'object',
  properties: {
    limit: { 'x-py': 'int', minimum: 1, maximum: 1000, default: 100 },
    user_id: { 'x-py': 'str', maxLength: 512, description: 'only changes of this tenant' },
  },
} as const satisfies ModelSchema;

const nullableString = { type: ['string', 'null'] } as const;
const dateTime = { type: 'string', format: 'date-time' } as const;

/** A key as listed: never its secret, salt or hash. */
export const apiKeySchema = {
  type: 'object',
  required: ['id', 'prefix', 'name', 'scope', 'user_id', 'created_at', 'expires_at', 'revoked_at', 'created_by'],
  properties: {
    id: { type: 'string', format: 'uuid' },
    prefix: { type: 'string', description: 'the key’s first characters, to recognise it' },
    name: nullableString,
    scope: { enum: API_KEY_SCOPES },
    user_id: nullableString,
    created_at: dateTime,
    expires_at: { type: ['string', 'null'], format: 'date-time' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
    created_by: { type: 'string', description: 'the id of the admin key that created it, or bootstrap' },
    created_while_auth_off: {
      type: 'boolean',
      description:
        'made while AUTH_MODE=off, by anyone: refused with AUTH_MODE=on until re-issued (npm run keys -- reissue-auth-off)',
    },
  },
} as const;

/** The 201 of POST /api/admin/keys: the key listed, and its secret (`key`), shown this once. */
export const apiKeyCreatedSchema = {
  type: 'object',
  required: [...apiKeySchema.required, 'key'],
  properties: {
    ...apiKeySchema.properties,
    key: {
      type: 'string',
      description: 'the secret: send it as `Authorization: Bearer <key>`; it is not stored and cannot be shown again',
    },
  },
} as const;

export const apiKeyListSchema = { type: 'array', items: apiKeySchema } as const;

export const auditListSchema = {
  type: 'array',
  items: {
    type: 'object',
    required: ['id', 'action', 'subject_id', 'actor_key_id', 'user_id', 'at', 'detail'],
    properties: {
      id: { type: 'string', format: 'uuid' },
      action: { enum: AUDIT_ACTIONS },
      subject_id: { type: 'string' },
      actor_key_id: { type: 'string' },
      user_id: nullableString,
      at: dateTime,
      detail: { type: 'object', description: 'the change (never a secret)' },
    },
  },
} as const;
