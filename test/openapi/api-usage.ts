import type { ItemAnswer, Session } from '../../clients/typescript/src/client.ts';
import type { components, paths } from './callmeter-api.ts';

/**
 * The answers as their callers read them, typed by what openapi-typescript generates from
 * /openapi.json (callmeter-api.ts): the dashboard (services/query/dashboard/web/*.js, type-checked
 * against the named schemas; here each read is taken from the path that answers it, so a path that
 * stops answering the schema the page names fails too) and the TypeScript client
 * (clients/typescript/src/client.ts, whose own types must accept the documented answers). A field a
 * caller reads that the document drops, renames or retypes fails to compile
 * (test/integration/openapi-types.test.ts compiles this file).
 */

type Schemas = components['schemas'];
type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body `method path` answers with `status`. */
type Answer<P extends keyof paths, M extends keyof paths[P], S extends number = 200> = paths[P][M] extends {
  responses: infer R;
}
  ? S extends keyof R
    ? JsonOf<R[S]>
    : never
  : never;

// app.js: money(), the tiles, and a failed answer's detail.
const money = (value: string | null | undefined) => (value === undefined || value === null ? '…' : `$${value}`);

export function tiles(summary: Answer<'/api/costs/summary', 'get'>, live: Schemas['LiveCosts'] | null) {
  return [
    money(summary.total_cost),
    money(summary.this_month_cost),
    money(live?.total_cost ?? summary.live_cost),
    live ? `${live.sessions.length} live` : '',
    summary.unpriced_event_count,
  ];
}

export function failure(body: Answer<'/api/costs/summary', 'get', 401> | null, text: string): string {
  return body?.detail ?? text;
}

// app.js Timeline and chart.js: a bucket's date, cost, events, by provider and by service.
export function timelineRows(points: Answer<'/api/costs/timeline', 'get'>, groupBy: 'provider' | 'service') {
  return points.map((point) => {
    const costs: Record<string, number> = {};
    if (groupBy === 'provider')
      for (const [name, cost] of Object.entries(point.by_provider)) costs[name] = Number(cost);
    else for (const s of point.by_service) costs[s.service] = (costs[s.service] ?? 0) + Number(s.cost);
    return [point.date, money(point.total_cost), point.event_count, costs] as const;
  });
}

// app.js Dashboard: by agent, unpriced usage and the prices in force.
export function agentRows(agents: Answer<'/api/costs/by-agent', 'get'>) {
  return agents.map((a) => [a.agent_name, money(a.total_cost), a.session_count, a.event_count]);
}

export function unpricedRows(unpriced: Answer<'/api/costs/unpriced', 'get'>) {
  return unpriced.map((u) => [u.provider, u.model, u.event_type, u.event_count]);
}

export function rateRows(rates: Answer<'/api/rates', 'get'>) {
  const rows = rates
    .slice(0, 100)
    .map((r) => [
      r.provider,
      r.model ?? '',
      `${r.dimension} per ${r.per} ${r.unit}`,
      `${r.price} ${r.currency}`,
      r.scope,
    ]);
  return { caption: `The first 100 of ${rates.length} prices`, rows };
}

// app.js Sessions: the page of calls and each call's exact cost from its cost card.
export function sessionRows(list: Answer<'/api/sessions/', 'get'>, pageSize: number) {
  const pages = Math.max(1, Math.ceil(list.total / pageSize));
  return { pages, rows: list.sessions.map((s) => [s.id, s.room_name, s.status, s.started_at ?? '', s.duration ?? '']) };
}

export function cardCost(card: Answer<'/api/sessions/{session_id}/costs', 'get'>): [string, string] {
  return [card.session_id, card.total_cost_exact];
}

// app.js Breakdown: a call's rows, whether it is live, its total; read from /cost-breakdown or from each
// message of /cost-stream (live.js), opened while the session's status is ACTIVE.
type Breakdown = Answer<'/api/sessions/{session_id}/cost-breakdown', 'get'> | Schemas['CostStreamMessage'];

export function breakdownView(session: Schemas['Session'], breakdown: Breakdown) {
  return {
    title: `Call ${session.room_name} ${session.id}`,
    streamed: session.status === 'ACTIVE',
    live: breakdown.live ? 'In progress: updates as usage is stored' : 'Ended',
    rows: breakdown.items.map((i) => [i.provider, i.service, `${i.quantity} ${i.unit}`, money(i.cost)]),
    total: money(breakdown.total_cost),
  };
}

// client.ts: createSession and updateSession answer the Session read as `Session`; a batch answers
// one ItemAnswer per item; any error body is read for its `detail`.
export const createdSession = (body: Answer<'/api/sessions/', 'post', 201>): Session => body;
export const updatedSession = (body: Answer<'/api/sessions/{session_id}', 'patch'>): Session => body;
export const batchAnswers = (body: Answer<'/api/usage/events/batch', 'post'>): readonly ItemAnswer[] => body;
export const errorDetail = (
  body: Answer<'/api/usage/events/batch', 'post', 422> | Answer<'/api/usage/events/batch', 'post', 413>,
): { detail?: unknown } => body;
