import type { ModelSchema } from '../dialect/schema-dialect.ts';
import type { FromPySchema } from '../dialect/schema-types.ts';
import { API_KEY_SCOPES, AUDIT_ACTIONS } from '../records/api-key.ts';
import { arrayOf, closedObject, dateTime, jsonObject, nullable, text, uuid } from './response-parts.ts';

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

/** A key as listed: never its secret, salt or hash. */
export const apiKeySchema = closedObject(
  {
    id: uuid,
    prefix: { ...text, description: 'the key’s first characters, to recognise it' },
    name: nullableString,
    scope: { enum: API_KEY_SCOPES },
    user_id: nullableString,
    created_at: dateTime,
    expires_at: nullable(dateTime),
    revoked_at: nullable(dateTime),
    created_by: { ...text, description: 'the id of the admin key that created it, or bootstrap' },
    created_while_auth_off: {
      type: 'boolean',
      description:
        'made while AUTH_MODE=off, by anyone: refused with AUTH_MODE=on until re-issued (npm run keys -- reissue-auth-off)',
    },
  },
  { title: 'ApiKey' },
);

/** The 201 of POST /api/admin/keys: the key listed, and its secret (`key`), shown this once. */
export const apiKeyCreatedSchema = closedObject(
  {
    ...apiKeySchema.properties,
    key: {
      type: 'string',
      description: 'the secret: send it as `Authorization: Bearer <key>`; it is not stored and cannot be shown again',
    },
  },
  { title: 'ApiKeyCreated' },
);

export const apiKeyListSchema = arrayOf(apiKeySchema);

export const auditListSchema = arrayOf(
  closedObject(
    {
      id: uuid,
      action: { enum: AUDIT_ACTIONS },
      subject_id: text,
      actor_key_id: text,
      user_id: nullableString,
      at: dateTime,
      detail: { ...jsonObject, description: 'the change (never a secret)' },
    },
    { title: 'AuditEntry' },
  ),
);
