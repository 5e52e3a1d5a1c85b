import { apiKeyCreatedSchema, apiKeyListSchema, apiKeySchema, keyCreateBody } from '../../../schemas/http/admin.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { KeyService } from './key-service.ts';

const routes = routeGroup({ tags: ['admin'], access: 'admin' });
const NOT_FOUND = { 404: errorDoc('Unknown key (or another tenant’s, for a bound admin key)', 'Key not found') };
const AT_CAP = {
  409: errorDoc(
    'The tenant already holds API_KEYS_PER_TENANT active keys',
    'Tenant tenant-1 has 100 active API keys, the most API_KEYS_PER_TENANT allows: revoke one first',
  ),
};

/** API keys (the audit log is the query service's): admin keys only (AUTH_MODE=on; with it off, anyone on the network). */
export function keyRoutes(keys: KeyService): Route[] {
  return [
    routes.post('/api/admin/keys', {
      summary: 'Create an API key; its secret is in this answer only',
      status: 201,
      responses: AT_CAP,
      request: { body: keyCreateBody },
      response: { schema: apiKeyCreatedSchema },
      handle: async ({ body, caller }) => keys.create(body, caller),
    }),
    routes.get('/api/admin/keys', {
      summary: 'The API keys, oldest first (never a secret)',
      response: { schema: apiKeyListSchema },
      handle: async ({ caller }) => keys.list(caller),
    }),
    routes.delete('/api/admin/keys/{key_id}', {
      summary: 'Revoke an API key: refused by every process within 5 seconds',
      responses: NOT_FOUND,
      response: { schema: apiKeySchema },
      handle: async ({ path, caller }) => keys.revoke(path.key_id, caller),
    }),
  ];
}
