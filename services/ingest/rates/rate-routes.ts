import {
  rateCreateBody,
  rateEntrySchema,
  rateRepriceBody,
  rateRepriceResponseSchema,
} from '../../../schemas/http/rates.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { TenantRateService } from './rate-service.ts';
import type { Repricing } from './reprice.ts';

const routes = routeGroup({ tags: ['rates'], access: 'admin' });

/** Tenants' own prices: written through the record path; listed and applied by the processes that price (GET /api/rates is the query service's). */
export function rateRoutes(tenantRates: TenantRateService, repricing: Repricing): Route[] {
  return [
    routes.post('/api/rates/reprice', {
      summary:
        'Price stored events again: the unpriced that a price now covers, and those a tenant price entered later supersedes',
      request: { body: rateRepriceBody },
      responses: {
        409: errorDoc(
          'The previous repricing is not stored yet',
          'The previous repricing is not stored yet: retry in a few seconds',
        ),
        503: { description: 'Not recorded: retry' },
      },
      response: { schema: rateRepriceResponseSchema },
      handle: async ({ body, tenant }) => repricing.reprice(body, tenant),
    }),
    routes.post('/api/rates', {
      summary: 'A tenant’s own price, from effective_from on (at most USAGE_MAX_AGE_DAYS back)',
      status: 201,
      request: { body: rateCreateBody },
      responses: {
        409: errorDoc(
          'The user already holds the most rate entries in force one user may (RATE_ENTRIES_PER_TENANT)',
          'User tenant-1 already has 1000 rate entries in force, the most one user may hold: end one (DELETE /api/rates/{id}) before adding another',
        ),
      },
      response: { schema: rateEntrySchema },
      handle: async ({ body, caller }) => tenantRates.create(body, caller),
    }),
    routes.delete('/api/rates/{rate_id}', {
      summary: 'End a tenant’s price now (a card or catalog price cannot be ended here: 409)',
      responses: {
        404: errorDoc('No such rate', 'Rate not found'),
        409: errorDoc(
          'A card or catalog price',
          'Rate stt-deepgram-2024-01 is the rate card’s: change the rate card file',
        ),
      },
      response: { schema: rateEntrySchema },
      handle: async ({ path, caller }) => tenantRates.end(path.rate_id, caller),
    }),
  ];
}
