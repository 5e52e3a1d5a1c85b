import { statementQuery, statementResponse } from '../../../schemas/http/periods.ts';
import { assertPeriod } from '../../shared/validation/billing-period.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import { wantsCsv } from '../csv.ts';
import type { AsOfSources } from '../as-of.ts';
import { statementCsv, statementOf } from '../statements.ts';
import { readPointOf } from './as-of-param.ts';

const routes = routeGroup({ tags: ['statements'], access: 'read' });

/** A month's statement of a tenant (docs/statements.md): a bound credential reads its own tenant's only. */
export function statementRoutes(ch: ClickHouse, asOfSources: AsOfSources, now: () => number = Date.now): Route[] {
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
        const { ch: reads } = readPointOf(ch, asOfSources, query.as_of, now());
        const statement = await statementOf(reads, path.user_id, path.period, query.by_agent ?? false);
        return wantsCsv(query.format, ctx.get('accept')) ? statementCsv(statement) : statement;
      },
    }),
  ];
}
