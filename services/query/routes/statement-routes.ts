import { statementQuery, statementResponse } from '../../../schemas/http/periods.ts';
import { assertPeriod } from '../../shared/validation/billing-period.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import { wantsCsv } from '../csv.ts';
import { asOfReads, type AsOfSources } from '../as-of.ts';
import { readPeriodVersions } from '../../shared/clickhouse/tables/billing-periods.ts';
import { statementCsv, statementOf } from '../statements.ts';
import { readPointOf } from './as-of-param.ts';

const routes = routeGroup({ tags: ['statements'], access: 'read' });

/** A month's statement of a tenant (docs/statements.md): a bound credential reads its own tenant's only. */
export function statementRoutes(ch: ClickHouse, asOfSources: AsOfSources, now: () => number = Date.now): Route[] {
  /** Where a statement is read: as a closed version left it (as of its close), as of an instant, or now. */
  async function readsOf(userId: string, period: string, version: number | undefined, asOf: Date | undefined) {
    if (version === undefined) return readPointOf(ch, asOfSources, asOf, now()).ch;
    const closed = (await readPeriodVersions(ch, userId)).find(
      (entry) => entry.period === period && entry.version === version,
    );
    if (closed === undefined) throw AppError.of('NOT_FOUND', 'Statement not found');
    return asOfReads(ch, asOfSources, closed.closed_ms);
  }
  return [
    routes.get('/api/statements/{user_id}/{period}', {
      summary: 'A tenant’s statement of a month: its usage lines, and adjustments of earlier closed months',
      request: { query: statementQuery },
      response: statementResponse,
      responses: {
        404: errorDoc('Another tenant’s statement, for a credential bound to a tenant', 'Statement not found'),
      },
      handle: async ({ path, query, tenant }, ctx) => {
        if (tenant !== null && tenant !== path.user_id) throw AppError.of('NOT_FOUND', 'Statement not found');
        assertPeriod(path.period);
        const statement = await statementOf(
          await readsOf(path.user_id, path.period, query.version, query.as_of),
          path.user_id,
          path.period,
          query.by_agent ?? false,
        );
        return wantsCsv(query.format, ctx.get('accept')) ? statementCsv(statement) : statement;
      },
    }),
  ];
}
