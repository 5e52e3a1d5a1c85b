import { rateCreateBody, rateEntrySchema } from '../../../schemas/http/rates.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import type { TenantRateService } from '../rate-service.ts';

const TAGS = ['rates'];

/** Tenants' own prices: written through the record path; listed and applied by the processes that price (GET /api/rates is the query service's). */
export function rateRoutes(tenantRates: TenantRateService): Route[] {
  return [
    defineRoute({
      method: 'POST',
      path: '/api/rates',
      access: 'admin',
      summary: 'A tenant’s own price, from effective_from on (never earlier than now)',
      tags: TAGS,
      status: 201,
      request: { body: rateCreateBody },
      response: { schema: rateEntrySchema },
      handle: async ({ body, caller }) => tenantRates.create(body, caller),
    }),
    defineRoute({
      method: 'DELETE',
      path: '/api/rates/{rate_id}',
      access: 'admin',
      summary: 'End a tenant’s price now (a card or catalog price cannot be ended here: 409)',
      tags: TAGS,
      responses: {
        404: { description: 'No such rate', example: { detail: 'Rate not found' } },
        409: {
          description: 'A card or catalog price',
          example: { detail: 'Rate stt-deepgram-2024-01 is the rate card’s: change the rate card file' },
        },
      },
      response: { schema: rateEntrySchema },
      handle: async ({ path, caller }) => tenantRates.end(path.rate_id, caller),
    }),
  ];
}
