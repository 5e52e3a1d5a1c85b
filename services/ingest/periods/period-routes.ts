import { periodResponse, periodSettingsBody, periodSettingsResponse } from '../../../schemas/http/periods.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { PeriodService } from './period-service.ts';

const routes = routeGroup({ tags: ['statements'], access: 'admin' });

export function periodRoutes(periods: PeriodService): Route[] {
  return [
    routes.get('/api/periods/{user_id}/settings', {
      summary: 'A tenant’s billing settings: the time zone its months begin and end in',
      response: periodSettingsResponse,
      handle: async ({ path, tenant }) => periods.settings(path.user_id, tenant),
    }),
    routes.patch('/api/periods/{user_id}/settings', {
      summary: 'Set the time zone of a tenant’s months, before its first close',
      request: { body: periodSettingsBody },
      responses: {
        409: errorDoc(
          'The tenant closed a month already: its months keep their time zone',
          'User tenant-1 closed period 2026-10 at 2026-11-02T09:00:00.000Z: the time zone of its months is fixed once a month was closed',
        ),
        503: { description: 'Not recorded: retry' },
      },
      response: periodSettingsResponse,
      handle: async ({ path, body, caller, tenant }) =>
        periods.setTimeZone(path.user_id, body.time_zone, caller, tenant),
    }),
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
