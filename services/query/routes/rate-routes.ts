import {
  rateEntryListSchema,
  rateQuoteBody,
  rateQuoteResponseSchema,
  ratesQuery,
  type RateQuoteBody,
} from '../../../schemas/http/rates.ts';
import type { RateCard } from '../../../schemas/rate-card.ts';
import { AppError } from '../../shared/errors.ts';
import { requestedTenant } from '../../shared/auth/tenant.ts';
import type { Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { Catalogs } from '../../domain/pricing/index.ts';
import { priceUsage } from '../../domain/pricing/index.ts';
import { listRates } from '../../domain/pricing/index.ts';
import { reportedCostProblems } from '../../domain/usage/index.ts';
import { usageQuantities } from '../../domain/usage/index.ts';

const routes = routeGroup({ tags: ['rates'], access: 'read' });

export interface RateReadDeps {
  /** The card with the tenants' entries as last read (every few seconds). */
  readonly card: () => RateCard;
  readonly catalogs: Catalogs;
}

/** The prices in force and what a usage event would cost: the same card, tenant entries, catalogs and function the consumer prices with. */
export function rateReadRoutes({ card, catalogs }: RateReadDeps): Route[] {
  return [
    routes.get('/api/rates', {
      summary: 'The prices in force (rate card, tenant entries, built-in catalog), filtered',
      request: { query: ratesQuery },
      response: { schema: rateEntryListSchema },
      handle: async ({ query, tenant }) =>
        listRates(card(), catalogs, { ...forTenant(query, tenant, 'read the rates'), at: query.at ?? new Date() }),
    }),
    routes.post('/api/rates/quote', {
      summary: 'What one usage event would cost, part by part (nothing is stored)',
      request: { body: rateQuoteBody },
      response: { schema: rateQuoteResponseSchema },
      handle: async ({ body, tenant }) => quote(card(), catalogs, forTenant(body, tenant, 'quote the rates')),
    }),
  ];
}

/** The request with user_id the tenant it is for: the one it names (a bound credential's own only), else the credential's. */
function forTenant<T extends { readonly user_id?: string }>(request: T, tenant: string | null, what: string): T {
  return { ...request, user_id: requestedTenant(tenant, request.user_id, what) ?? undefined };
}

function quote(card: RateCard, catalogs: Catalogs, body: RateQuoteBody) {
  const quantities = usageQuantities(body.event_type, body);
  if ('type' in quantities) throw AppError.validation([quantities]);
  const problems = reportedCostProblems(quantities.quantity, body);
  if (problems.length > 0) throw AppError.validation(problems);
  const priced = priceUsage(
    card,
    {
      ...quantities,
      event_type: body.event_type,
      provider: body.provider.trim().toLowerCase(),
      model: body.model ?? null,
      user_id: body.user_id ?? '',
      occurred_at: body.timestamp ?? new Date(),
      reported_unit_cost: body.unit_cost ?? null,
      reported_total_cost: body.total_cost ?? null,
    },
    catalogs,
  );
  return {
    total_cost: priced.cost,
    currency: priced.currency,
    cost_source: priced.cost_source,
    scope: priced.scope,
    quantity: priced.quantity,
    components: priced.components,
  };
}
