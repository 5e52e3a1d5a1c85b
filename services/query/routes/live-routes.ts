import type { WireOf } from '../../../schemas/http/response-parts.ts';
import { costStream, liveCostsStream } from '../../../schemas/http/session-cost-responses.ts';
import { FINAL_SESSION_STATUSES } from '../../../schemas/records/session.ts';
import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { AppError } from '../../shared/errors.ts';
import { errorDoc, type Route } from '../../shared/http/define-route.ts';
import { routeGroup } from '../../shared/http/route-group.ts';
import type { LiveUsageStore } from '../../shared/redis/live-usage.ts';
import { costBreakdown } from '../cost-breakdown.ts';
import { liveCosts } from '../live/live-costs.ts';
import { streamCaller, type LiveStreams } from '../live/live-streams.ts';
import { sessionHead } from '../queries/session-costs.ts';
import { capStanding, capsOfCall } from '../live/call-cap.ts';
import type { Budgets } from '../../domain/budgets/index.ts';

const routes = routeGroup({ tags: ['costs'], access: 'read' });
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const ENDED = new Set<string>(FINAL_SESSION_STATUSES);
const STREAM_DOCS = {
  200: { description: 'text/event-stream: the state at once, then on every change; `: heartbeat` comments between' },
  429: errorDoc(
    'Too many live streams open for this user, or for this credential or address (Retry-After)',
    'Too many live streams …',
  ),
  503: errorDoc('The server has as many live streams open as it serves (Retry-After)', 'This server has …'),
};

export interface LiveRoutesDeps {
  readonly ch: ClickHouse;
  readonly liveUsage: LiveUsageStore;
  readonly streams: LiveStreams;
  /** The per-call caps a call's stream measures it against. */
  readonly budgets: Pick<Budgets, 'all'>;
  readonly now?: () => number;
}

/** The live cost streams (server-sent events): the caller's calls in progress, and one call's breakdown. */
export function liveRoutes({ ch, liveUsage, streams, budgets, now = Date.now }: LiveRoutesDeps): Route[] {
  return [
    routes.get('/api/costs/live', {
      summary: 'A stream of the caller’s calls in progress and what each has cost so far, on every stored change',
      requireUserId: true,
      responses: STREAM_DOCS,
      response: liveCostsStream,
      handle: async ({ userId, caller }, ctx) =>
        streams.open(
          ctx,
          userId!,
          streamCaller(caller, ctx.ip),
          { tenant: userId! },
          { event: 'live', read: () => liveCosts(ch, userId!, now()), volatile: ['as_of'] },
        ),
    }),
    routes.get('/api/sessions/{session_id}/cost-stream', {
      summary:
        'A stream of one call’s cost breakdown on every change, a `cap_reached` message once past its per-call cap, and a last `end` message once the call ended',
      responses: { ...STREAM_DOCS, 404: errorDoc('Unknown session', 'Session not found') },
      response: costStream,
      handle: async ({ path, userId, caller }, ctx) => {
        const head = UUID.test(path.session_id) ? await sessionHead(ch, path.session_id.toLowerCase()) : null;
        if (head === null || (userId !== null && userId !== head.user_id))
          throw AppError.of('NOT_FOUND', 'Session not found');
        return streams.open(
          ctx,
          head.user_id,
          streamCaller(caller, ctx.ip),
          { session: head.id },
          {
            event: 'breakdown',
            finalEvent: 'end',
            read: async (): Promise<WireOf<typeof costStream.schema>> => {
              const [breakdown, latest] = await Promise.all([
                costBreakdown(ch, liveUsage, head.id, null),
                sessionHead(ch, head.id),
              ]);
              const budget = capStanding(capsOfCall(budgets, head), breakdown);
              return { ...breakdown, status: latest?.status ?? head.status, budget };
            },
            isFinal: (state) => ENDED.has(state.status),
            once: { event: 'cap_reached', when: (state) => state.budget?.allowed === false },
          },
        );
      },
    }),
  ];
}
