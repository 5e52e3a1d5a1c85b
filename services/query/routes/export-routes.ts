import { usageExportQuery } from '../../../schemas/http/query-params.ts';
import { usageExportResponse } from '../../../schemas/http/usage-export.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import type { RouteCaller } from '../../shared/http/define-route.ts';
import type { Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import { AppError } from '../../shared/errors.ts';
import { DAY_MS, usageExportBody, type ExportFormat } from '../usage-export.ts';
import { dateRangeOf } from './date-bounds.ts';

/** The longest range one export answers: a month, the period finance bills. */
export const MAX_EXPORT_DAYS = 31;

const exports_ = routeGroup({ tags: ['exports'], access: 'read', readsCallerTenant: true });

/** Priced events as files a warehouse or a notebook reads: Parquet, CSV or JSON lines. */
export function exportRoutes(ch: ClickHouse): Route[] {
  return [
    exports_.get('/api/export/usage', {
      summary: 'The priced usage events of a range, as Parquet, CSV or JSON lines (one row per event)',
      request: { query: usageExportQuery },
      response: usageExportResponse,
      handle: async ({ query, ...caller }) => {
        const { start, end } = dateRangeOf({ start_date: query.from, end_date: query.to }, 'UTC', {
          start: 'from',
          end: 'to',
        });
        // Required, and an empty value reads as absent: an export is always of a bounded range.
        if (start === null || end === null)
          throw AppError.validation(
            (['from', 'to'] as const)
              .filter((name) => (name === 'from' ? start : end) === null)
              .map((name) => ({
                type: 'value_error',
                loc: ['query', name],
                msg: `Value error, ${name} must be a date or a date-time`,
                input: query[name],
                ctx: { error: {} },
              })),
          );
        if (end - start > MAX_EXPORT_DAYS * DAY_MS)
          throw AppError.validation([
            {
              type: 'value_error',
              loc: ['query', 'to'],
              msg: `Value error, an export spans at most ${MAX_EXPORT_DAYS} days`,
              input: query.to,
              ctx: { error: {} },
            },
          ]);
        const userId = exportedTenant(query.user_id, caller);
        return usageExportBody(ch, { start, end, userId }, query.format as ExportFormat);
      },
    }),
  ];
}

/**
 * Whose events an export holds: the caller's tenant (a bound credential's, or x-user-id), or with an
 * unbound admin credential any tenant `user_id` names, or every tenant when neither names one.
 */
function exportedTenant(named: string | undefined, { userId, tenant, caller }: RouteCaller): string | null {
  const admin = tenant === null && caller.scope === 'admin';
  if (named !== undefined && named !== '') {
    if (!admin && named !== userId)
      throw AppError.of('FORBIDDEN', 'Only an unbound admin credential may export another tenant than its own');
    return named;
  }
  if (userId !== null) return userId;
  if (admin) return null;
  throw AppError.of('UNAUTHORIZED', 'User ID required');
}
