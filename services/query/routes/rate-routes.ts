import {
  rateEntryListSchema,
  rateQuoteBody,
  rateQuoteResponseSchema,
  ratesQuery,
  type RateQuoteBody,
} from '../../../schemas/http/rates.ts';
import type { RateCard } from '../../../schemas/rate-card.ts';
import { AppError } from '../../shared/errors.ts';
import { assertActsFor } from '../../shared/auth/tenant.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import type { Catalogs } from '../../shared/pricing/catalogs.ts';
import { priceUsage } from '../../shared/pricing/price-usage.ts';
import { listRates } from '../../shared/pricing/rate-listing.ts';
import { reportedCostProblems } from '../../shared/usage/reported-cost.ts';
import { usageQuantities } from '../../shared/usage/usage-quantity.ts';

const TAGS = ['rates'];

export interface RateReadDeps {
  /** The card with the tenants' entries as last read (every few seconds). */
  readonly card: () => RateCard;
  readonly catalogs: Catalogs;
  readonly now?: () => number;
}

/** The prices in force and what a usage event would cost: the same card, tenant entries, catalogs and function the consumer prices with. */
export function rateReadRoutes({ card, catalogs, now = Date.now }: RateReadDeps): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/rates',
      access: 'read',
      summary: 'The prices in force (rate card, tenant entries, built-in catalog), filtered',
      tags: TAGS,
      request: { query: ratesQuery },
      response: { schema: rateEntryListSchema },
      handle: async ({ query, tenant }) => {
        if (query.user_id !== undefined) assertActsFor(tenant, query.user_id, 'read the rates');
        const userId = query.user_id ?? tenant ?? undefined;
        return listRates(card(), catalogs, {
          at: query.at ?? new Date(now()),
          ...(query.provider === undefined ? {} : { provider: query.provider }),
          ...(query.model === undefined ? {} : { model: query.model }),
          ...(query.service === undefined ? {} : { service: query.service }),
          ...(userId === undefined ? {} : { user_id: userId }),
        });
      },
    }),
    defineRoute({
      method: 'POST',
      path: '/api/rates/quote',
      access: 'read',
      summary: 'What one usage event would cost, part by part (nothing is stored)',
      tags: TAGS,
      request: { body: rateQuoteBody },
      response: { schema: rateQuoteResponseSchema },
      handle: async ({ body, tenant }) => {
        if (body.user_id !== undefined) assertActsFor(tenant, body.user_id, 'quote the rates');
        return quote(
          card(),
          catalogs,
          tenant === null || body.user_id !== undefined ? body : { ...body, user_id: tenant },
          now(),
        );
      },
    }),
  ];
}

function quote(card: RateCard, catalogs: Catalogs, body: RateQuoteBody, nowMs: number) {
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
      occurred_at: body.timestamp ?? new Date(nowMs),
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
