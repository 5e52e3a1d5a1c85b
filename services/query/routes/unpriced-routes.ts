import { unpricedUsageResponse } from '../../../schemas/http/unpriced.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { defineRoute, type Route } from '../../shared/http/define-route.ts';
import { unpricedUsage } from '../unpriced-usage.ts';

/** Nothing silently zero: what of the caller's usage no price applied to. */
export function unpricedRoutes(ch: ClickHouse): Route[] {
  return [
    defineRoute({
      method: 'GET',
      path: '/api/costs/unpriced',
      access: 'read',
      summary: 'The caller’s usage stored unpriced (cost 0), by provider, model and event type',
      tags: ['costs'],
      requireUserId: true,
      response: {
        schema: unpricedUsageResponse,
        example: [
          {
            provider: 'acme-tts',
            model: 'v2',
            event_type: 'tts_characters',
            unit: 'character',
            event_count: 12,
            quantity: '5400',
            first_seen: '2026-11-24T09:00:00.000Z',
            last_seen: '2026-11-24T10:15:00.000Z',
          },
        ],
      },
      handle: async ({ userId }) => unpricedUsage(ch, userId!),
    }),
  ];
}
