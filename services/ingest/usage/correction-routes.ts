import { usageAmendBody, usageCorrectionResponse, usageVoidBody } from '../../../schemas/http/usage-corrections.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { Logger } from '../../shared/logger.ts';
import { liveStateRunner } from '../shared/live-state.ts';
import type { UsageCorrections } from './usage-corrections.ts';

const routes = routeGroup({ tags: ['usage'], access: 'ingest' });

const CONFLICT = errorDoc(
  'The event was voided already, is itself a row of a correction, or another correction of it is not stored yet',
  'Usage event 0b7c7c8e-3f4a-4f7e-9d0e-4d2b8e1f5a10 was voided already (correction 5d1f3c2a-8e9b-4c7d-a6f5-1e2d3c4b5a69)',
);
const NOT_FOUND = errorDoc('No such stored event of the caller’s tenant', 'Usage event not found');

/**
 * Corrections of stored usage (docs/corrections.md): the event is found among the caller's tenant's
 * (a bound credential's, else x-user-id's, else any tenant's when only one has that id).
 */
export function correctionRoutes(corrections: UsageCorrections, log: Logger): Route[] {
  const run = liveStateRunner(log, {
    event: 'usage_correction_unavailable',
    detail: 'Corrections are unavailable (storage not answering): retry',
  });
  return [
    routes.post('/api/usage/events/{event_id}/void', {
      summary: 'Void a stored usage event: it stops counting everywhere; nothing is deleted',
      status: 201,
      request: { body: usageVoidBody },
      responses: { 404: NOT_FOUND, 409: CONFLICT, 503: { description: 'Not recorded: retry' } },
      response: usageCorrectionResponse,
      handle: async ({ path, body, tenant, userId }) =>
        run(() => corrections.void(path.event_id, body.reason, tenant ?? userId)),
    }),
    routes.post('/api/usage/events/{event_id}/amend', {
      summary: 'Amend a stored usage event: reversed and replaced, priced at its own instant',
      status: 201,
      request: { body: usageAmendBody },
      responses: { 404: NOT_FOUND, 409: CONFLICT, 503: { description: 'Not recorded: retry' } },
      response: usageCorrectionResponse,
      handle: async ({ path, body, tenant, userId }) =>
        run(() => corrections.amend(path.event_id, body, tenant ?? userId)),
    }),
  ];
}
