import { apiKeyCreatedSchema, apiKeyListSchema, apiKeySchema, keyCreateBody } from '../../../schemas/http/admin.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import type { KeyService } from '../key-service.ts';

const TAGS = ['admin'];
const NOT_FOUND = {
  404: {
    description: 'Unknown key (or another tenant’s, for a bound admin key)',
    example: { detail: 'Key not found' },
  },
};

/** API keys (the audit log is the query service's): admin keys only (AUTH_MODE=on; with it off, anyone on the network). */
export function adminRoutes(keys: KeyService): Route[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/admin/keys',
      access: 'admin',
      summary: 'Create an API key; its secret is in this answer only',
      tags: TAGS,
      status: 201,
      request: { body: keyCreateBody },
      response: { schema: apiKeyCreatedSchema },
      handle: async ({ body, caller }) => keys.create(body, caller),
    }),
    defineRoute({
      method: 'GET',
      path: '/api/admin/keys',
      access: 'admin',
      summary: 'The API keys, oldest first (never a secret)',
      tags: TAGS,
      response: { schema: apiKeyListSchema },
      handle: async ({ caller }) => keys.list(caller),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/admin/keys/{key_id}',
      access: 'admin',
      summary: 'Revoke an API key: refused by every process within 5 seconds',
      tags: TAGS,
      responses: NOT_FOUND,
      response: { schema: apiKeySchema },
      handle: async ({ path, caller }) => keys.revoke(path.key_id, caller),
    }),
  ];
}
