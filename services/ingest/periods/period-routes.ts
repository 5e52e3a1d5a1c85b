import { periodResponse } from '../../../schemas/http/periods.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { PeriodService } from './period-service.ts';

const routes = routeGroup({ tags: ['statements'], access: 'admin' });

export function periodRoutes(periods: PeriodService): Route[] {
  return [
    routes.post('/api/periods/{user_id}/{period}/close', {
      summary: 'Close a tenant’s month once it has ended: its statement never changes after',
      responses: {
        409: errorDoc(
          'The month has not ended yet, or was closed already',
          'Period 2026-10 of user tenant-1 was closed at 2026-11-02T09:00:00.000Z',
        ),
        503: { description: 'Not recorded: retry' },
      },
      response: periodResponse,
      handle: async ({ path, caller, tenant }) => periods.close(path.user_id, path.period, caller, tenant),
    }),
    routes.post('/api/periods/{user_id}/{period}/reopen', {
      summary: 'Reopen a closed month: a later close makes a new version; every version’s statement stays readable',
      responses: {
        409: errorDoc('The month is open', 'Period 2026-10 of user tenant-1 is open: only a closed month is reopened'),
        503: { description: 'Not recorded: retry' },
      },
      response: periodResponse,
      handle: async ({ path, caller, tenant }) => periods.reopen(path.user_id, path.period, caller, tenant),
    }),
  ];
}
