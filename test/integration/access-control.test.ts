import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call, type Answer } from '../support/api.ts';
import { makeAgentBody, makeSessionBody, makeUsageEventBody } from '../support/bodies.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually, isolate, serviceEnv } from '../support/harness.ts';
import { startJwksServer, type JwksServer } from '../support/jwks-server.ts';

// The enforcement table of AUTH_MODE=on (docs/tenancy.md): every route, called by every
// kind of credential, in the embedded process and with ingest apart over Kafka and Redis.

const A = 'tenant-a';
const B = 'tenant-b';
const ADMIN_API_KEY = `bootstrap-${randomUUID()}`;

type Access = 'ingest' | 'read' | 'session_read' | 'admin';
type Scope = 'ingest' | 'read' | 'admin';
const ALLOWED: Record<Access, readonly Scope[]> = {
  ingest: ['ingest', 'admin'],
  read: ['read', 'admin'],
  session_read: ['ingest', 'read', 'admin'],
  admin: ['admin'],
};

interface Running {
  readonly ingest: string;
  readonly query: string;
  stop(): Promise<unknown>;
}

interface Credential {
  readonly name: string;
  readonly headers: Record<string, string>;
  /** null: not a valid credential (401). */
  readonly scope: Scope | null;
  readonly tenant: string | null;
}

/** What every route's request needs, made fresh by the admin for each call where the call changes it. */
interface Fixtures {
  readonly sessionA: Record<string, unknown>;
  readonly sessionB: Record<string, unknown>;
  readonly agentA: Record<string, unknown>;
  readonly agentB: Record<string, unknown>;
}

interface RouteCase {
  readonly method: string;
  readonly path: string;
  readonly service: 'ingest' | 'query';
  readonly access: Access;
  /** The request for tenant A's data. */
  readonly own: (fx: Fixtures, admin: Admin) => Promise<{ path: string; body?: unknown }>;
  /** What a credential with the right gets when it is not a 2xx: a route whose `own` names nothing stored. */
  readonly allowed?: 404 | 409;
  /** The same request aimed at tenant B's data, and what a credential bound to A gets for it. */
  readonly other?: {
    readonly expect: 403 | 404 | 'empty';
    readonly request: (fx: Fixtures, admin: Admin) => Promise<{ path: string; body?: unknown }>;
  };
}

interface Admin {
  session(user: string): Promise<Record<string, unknown>>;
  agent(user: string): Promise<Record<string, unknown>>;
  numberOf(agentId: string): Promise<string>;
  rate(user: string): Promise<string>;
  key(scope: Scope, user?: string): Promise<{ id: string; key: string }>;
  webhook(user: string): Promise<string>;
  budget(user: string): Promise<string>;
}

const phone = () => `+1555${String(Math.floor(Math.random() * 1e7)).padStart(7, '0')}`;
const transcript = (sessionId?: string) => ({
  content: 'hello',
  speaker: 'USER',
  ...(sessionId === undefined ? {} : { session_id: sessionId }),
});
const usage = (session: Record<string, unknown>) =>
  makeUsageEventBody(session.id as string, { user_id: session.user_id });

/** A public address literal (no DNS): the processes here do not allow private ones, and nothing is emitted to it. */
const webhookBody = (user: string) => ({
  url: 'https://93.184.215.14/hook',
  events: ['budget.exhausted'],
  user_id: user,
});
const WEBHOOK_ROUTES: readonly RouteCase[] = [
  {
    method: 'POST',
    path: '/api/webhooks',
    service: 'ingest',
    access: 'admin',
    own: async () => ({ path: '/api/webhooks', body: webhookBody(A) }),
    other: { expect: 403, request: async () => ({ path: '/api/webhooks', body: webhookBody(B) }) },
  },
  {
    method: 'GET',
    path: '/api/webhooks',
    service: 'ingest',
    access: 'admin',
    own: async () => ({ path: '/api/webhooks' }),
  },
  ...(['', '/rotate-secret', '/deliveries'] as const).map((tail): RouteCase => ({
    method: tail === '/rotate-secret' ? 'POST' : 'GET',
    path: `/api/webhooks/{webhook_id}${tail}`,
    service: 'ingest',
    access: 'admin',
    own: async (_, admin) => ({ path: `/api/webhooks/${await admin.webhook(A)}${tail}` }),
    other: { expect: 404, request: async (_, admin) => ({ path: `/api/webhooks/${await admin.webhook(B)}${tail}` }) },
  })),
  {
    method: 'DELETE',
    path: '/api/webhooks/{webhook_id}',
    service: 'ingest',
    access: 'admin',
    own: async (_, admin) => ({ path: `/api/webhooks/${await admin.webhook(A)}` }),
    other: { expect: 404, request: async (_, admin) => ({ path: `/api/webhooks/${await admin.webhook(B)}` }) },
  },
  {
    method: 'POST',
    path: '/api/webhooks/{webhook_id}/deliveries/{message_id}/redeliver',
    service: 'ingest',
    access: 'admin',
    // No message was ever emitted to it: a 404 after the credential's checks.
    allowed: 404,
    own: async (_, admin) => ({ path: `/api/webhooks/${await admin.webhook(A)}/deliveries/msg_none/redeliver` }),
    other: {
      expect: 404,
      request: async (_, admin) => ({ path: `/api/webhooks/${await admin.webhook(B)}/deliveries/msg_none/redeliver` }),
    },
  },
];

/** A budget that only notifies, so that no case is refused a call by it. */
const budgetBody = (user: string) => ({ name: `access ${user}`, user_id: user, amount: '1000' });

const BUDGET_ROUTES: readonly RouteCase[] = [
  {
    method: 'POST',
    path: '/api/budgets',
    service: 'ingest',
    access: 'admin',
    own: async () => ({ path: '/api/budgets', body: budgetBody(A) }),
    other: { expect: 403, request: async () => ({ path: '/api/budgets', body: budgetBody(B) }) },
  },
  {
    method: 'GET',
    path: '/api/budgets',
    service: 'ingest',
    access: 'admin',
    own: async () => ({ path: `/api/budgets?user_id=${A}` }),
    other: { expect: 403, request: async () => ({ path: `/api/budgets?user_id=${B}` }) },
  },
  ...(['GET', 'PATCH', 'DELETE'] as const).map((method): RouteCase => ({
    method,
    path: '/api/budgets/{budget_id}',
    service: 'ingest',
    access: 'admin',
    own: async (_, admin) => ({
      path: `/api/budgets/${await admin.budget(A)}`,
      ...(method === 'PATCH' ? { body: { name: 'renamed' } } : {}),
    }),
    other: {
      expect: 404,
      request: async (_, admin) => ({
        path: `/api/budgets/${await admin.budget(B)}`,
        ...(method === 'PATCH' ? { body: { name: 'renamed' } } : {}),
      }),
    },
  })),
  {
    method: 'GET',
    path: '/api/sessions/{session_id}/budget',
    service: 'ingest',
    access: 'session_read',
    own: async (fx) => ({ path: `/api/sessions/${fx.sessionA.id}/budget` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/sessions/${fx.sessionB.id}/budget` }) },
  },
];

const ROUTES: readonly RouteCase[] = [
  ...WEBHOOK_ROUTES,
  ...BUDGET_ROUTES,
  {
    method: 'GET',
    path: '/api/agents/',
    service: 'ingest',
    access: 'session_read',
    own: async () => ({ path: '/api/agents/' }),
  },
  {
    method: 'GET',
    path: '/api/agents/{agent_id}',
    service: 'ingest',
    access: 'session_read',
    own: async (fx) => ({ path: `/api/agents/${fx.agentA.id}` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/agents/${fx.agentB.id}` }) },
  },
  {
    method: 'POST',
    path: '/api/agents/',
    service: 'ingest',
    access: 'ingest',
    own: async () => ({ path: '/api/agents/', body: makeAgentBody({ user_id: A }) }),
    other: { expect: 403, request: async () => ({ path: '/api/agents/', body: makeAgentBody({ user_id: B }) }) },
  },
  {
    method: 'PATCH',
    path: '/api/agents/{agent_id}',
    service: 'ingest',
    access: 'ingest',
    own: async (fx) => ({ path: `/api/agents/${fx.agentA.id}`, body: { name: 'Renamed' } }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/agents/${fx.agentB.id}`, body: { name: 'Renamed' } }) },
  },
  {
    method: 'DELETE',
    path: '/api/agents/{agent_id}',
    service: 'ingest',
    access: 'ingest',
    own: async (_, admin) => ({ path: `/api/agents/${(await admin.agent(A)).id}` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/agents/${fx.agentB.id}` }) },
  },
  {
    method: 'POST',
    path: '/api/telephony/numbers/release',
    service: 'ingest',
    access: 'ingest',
    own: async (_, admin) => {
      const agent = await admin.agent(A);
      await admin.numberOf(agent.id as string);
      return { path: '/api/telephony/numbers/release', body: { agent_id: agent.id } };
    },
    other: {
      expect: 404,
      request: async (fx) => ({ path: '/api/telephony/numbers/release', body: { agent_id: fx.agentB.id } }),
    },
  },
  {
    method: 'POST',
    path: '/api/telephony/numbers/assign',
    service: 'ingest',
    access: 'ingest',
    own: async (_, admin) => ({
      path: '/api/telephony/numbers/assign',
      body: { agent_id: (await admin.agent(A)).id, phone_number: phone() },
    }),
    other: {
      expect: 404,
      request: async (_, admin) => ({
        path: '/api/telephony/numbers/assign',
        body: { agent_id: (await admin.agent(B)).id, phone_number: phone() },
      }),
    },
  },
  {
    method: 'GET',
    path: '/api/telephony/numbers/{agent_id}',
    service: 'ingest',
    access: 'session_read',
    own: async (fx) => ({ path: `/api/telephony/numbers/${fx.agentA.id}` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/telephony/numbers/${fx.agentB.id}` }) },
  },
  {
    method: 'GET',
    path: '/api/telephony/lookup',
    service: 'ingest',
    access: 'session_read',
    own: async (fx) => ({
      path: `/api/telephony/lookup?phone_number=${encodeURIComponent(fx.agentA.phone as string)}`,
    }),
    other: {
      expect: 404,
      request: async (fx) => ({
        path: `/api/telephony/lookup?phone_number=${encodeURIComponent(fx.agentB.phone as string)}`,
      }),
    },
  },
  {
    method: 'GET',
    path: '/api/sessions/',
    service: 'ingest',
    access: 'session_read',
    own: async () => ({ path: '/api/sessions/' }),
  },
  {
    method: 'POST',
    path: '/api/sessions/',
    service: 'ingest',
    access: 'ingest',
    own: async () => ({ path: '/api/sessions/', body: makeSessionBody({ user_id: A }) }),
    other: { expect: 403, request: async () => ({ path: '/api/sessions/', body: makeSessionBody({ user_id: B }) }) },
  },
  {
    method: 'GET',
    path: '/api/sessions/by-room/{room_name}',
    service: 'ingest',
    access: 'session_read',
    own: async (fx) => ({ path: `/api/sessions/by-room/${fx.sessionA.room_name}` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/sessions/by-room/${fx.sessionB.room_name}` }) },
  },
  {
    method: 'POST',
    path: '/api/sessions/by-room/{room_name}/end',
    service: 'ingest',
    access: 'ingest',
    own: async (_, admin) => ({ path: `/api/sessions/by-room/${(await admin.session(A)).room_name}/end` }),
    other: {
      expect: 404,
      request: async (_, admin) => ({ path: `/api/sessions/by-room/${(await admin.session(B)).room_name}/end` }),
    },
  },
  {
    method: 'GET',
    path: '/api/sessions/{session_id}',
    service: 'ingest',
    access: 'session_read',
    own: async (fx) => ({ path: `/api/sessions/${fx.sessionA.id}` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/sessions/${fx.sessionB.id}` }) },
  },
  {
    method: 'GET',
    path: '/api/sessions/{session_id}/analysis',
    service: 'ingest',
    access: 'session_read',
    own: async (fx) => ({ path: `/api/sessions/${fx.sessionA.id}/analysis` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/sessions/${fx.sessionB.id}/analysis` }) },
  },
  {
    method: 'PATCH',
    path: '/api/sessions/{session_id}',
    service: 'ingest',
    access: 'ingest',
    own: async (fx) => ({ path: `/api/sessions/${fx.sessionA.id}`, body: { call_status: 'COMPLETED' } }),
    other: {
      expect: 404,
      request: async (fx) => ({ path: `/api/sessions/${fx.sessionB.id}`, body: { call_status: 'COMPLETED' } }),
    },
  },
  {
    method: 'GET',
    path: '/api/sessions/{session_id}/transcripts',
    service: 'ingest',
    access: 'session_read',
    own: async (fx) => ({ path: `/api/sessions/${fx.sessionA.id}/transcripts` }),
    other: { expect: 'empty', request: async (fx) => ({ path: `/api/sessions/${fx.sessionB.id}/transcripts` }) },
  },
  {
    method: 'POST',
    path: '/api/sessions/{session_id}/transcripts',
    service: 'ingest',
    access: 'ingest',
    own: async (fx) => ({
      path: `/api/sessions/${fx.sessionA.id}/transcripts`,
      body: transcript(fx.sessionA.id as string),
    }),
    other: {
      expect: 404,
      request: async (fx) => ({
        path: `/api/sessions/${fx.sessionB.id}/transcripts`,
        body: transcript(fx.sessionB.id as string),
      }),
    },
  },
  {
    method: 'POST',
    path: '/api/sessions/by-room/{room_name}/transcripts',
    service: 'ingest',
    access: 'ingest',
    own: async (fx) => ({ path: `/api/sessions/by-room/${fx.sessionA.room_name}/transcripts`, body: transcript() }),
    other: {
      expect: 404,
      request: async (fx) => ({
        path: `/api/sessions/by-room/${fx.sessionB.room_name}/transcripts`,
        body: transcript(),
      }),
    },
  },
  {
    method: 'POST',
    path: '/api/usage/events',
    service: 'ingest',
    access: 'ingest',
    own: async (fx) => ({ path: '/api/usage/events', body: usage(fx.sessionA) }),
    other: { expect: 403, request: async (fx) => ({ path: '/api/usage/events', body: usage(fx.sessionB) }) },
  },
  {
    method: 'POST',
    path: '/api/usage/events/batch',
    service: 'ingest',
    access: 'ingest',
    own: async (fx) => ({ path: '/api/usage/events/batch', body: [usage(fx.sessionA)] }),
  },
  // Events stored by a consumer apart are read by ingest through a ClickHouse server only (CLICKHOUSE_URL): an
  // unknown event is a 404 after the credential's checks, in both modes (usage-corrections.test.ts corrects stored ones).
  ...(['void', 'amend'] as const).map((kind): RouteCase => ({
    method: 'POST',
    path: `/api/usage/events/{event_id}/${kind}`,
    service: 'ingest',
    access: 'ingest',
    allowed: 404,
    own: async () => ({
      path: `/api/usage/events/${randomUUID()}/${kind}`,
      body: { reason: 'access check', ...(kind === 'amend' ? { quantity: 1 } : {}) },
    }),
  })),
  {
    method: 'GET',
    path: '/api/periods/{user_id}/settings',
    service: 'ingest',
    access: 'admin',
    own: async () => ({ path: `/api/periods/${A}/settings` }),
    other: { expect: 403, request: async () => ({ path: `/api/periods/${B}/settings` }) },
  },
  {
    method: 'PATCH',
    path: '/api/periods/{user_id}/settings',
    service: 'ingest',
    access: 'admin',
    // UTC, the zone a tenant has until it sets one: no case changes a month's edges.
    own: async () => ({ path: `/api/periods/${A}/settings`, body: { time_zone: 'UTC' } }),
    other: {
      expect: 403,
      request: async () => ({ path: `/api/periods/${B}/settings`, body: { time_zone: 'UTC' } }),
    },
  },
  {
    method: 'POST',
    path: '/api/periods/{user_id}/{period}/close',
    service: 'ingest',
    access: 'admin',
    // A month that has not ended: a 409 after the credential's checks, so that no case closes one.
    allowed: 409,
    own: async () => ({ path: `/api/periods/${A}/2099-01/close` }),
    other: { expect: 403, request: async () => ({ path: `/api/periods/${B}/2099-01/close` }) },
  },
  {
    method: 'POST',
    path: '/api/periods/{user_id}/{period}/reopen',
    service: 'ingest',
    access: 'admin',
    // A month never closed: a 409 after the credential's checks.
    allowed: 409,
    own: async () => ({ path: `/api/periods/${A}/2099-01/reopen` }),
    other: { expect: 403, request: async () => ({ path: `/api/periods/${B}/2099-01/reopen` }) },
  },
  {
    method: 'GET',
    path: '/api/statements/{user_id}/{period}',
    service: 'query',
    access: 'read',
    own: async () => ({ path: `/api/statements/${A}/2026-10` }),
    other: { expect: 404, request: async () => ({ path: `/api/statements/${B}/2026-10` }) },
  },
  {
    method: 'POST',
    path: '/api/rates/reprice',
    service: 'ingest',
    access: 'admin',
    own: async () => ({
      path: '/api/rates/reprice',
      body: { user_id: A, from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00Z', dry_run: true },
    }),
  },
  {
    method: 'POST',
    path: '/api/rates',
    service: 'ingest',
    access: 'admin',
    own: async () => ({
      path: '/api/rates',
      body: { user_id: A, provider: 'deepgram', event_type: 'stt_minutes', price: '0.001' },
    }),
  },
  {
    method: 'DELETE',
    path: '/api/rates/{rate_id}',
    service: 'ingest',
    access: 'admin',
    own: async (_, admin) => ({ path: `/api/rates/${await admin.rate(A)}` }),
  },
  {
    method: 'POST',
    path: '/api/admin/keys',
    service: 'ingest',
    access: 'admin',
    own: async () => ({ path: '/api/admin/keys', body: { scope: 'read', user_id: A } }),
  },
  {
    method: 'GET',
    path: '/api/admin/keys',
    service: 'ingest',
    access: 'admin',
    own: async () => ({ path: '/api/admin/keys' }),
  },
  {
    method: 'DELETE',
    path: '/api/admin/keys/{key_id}',
    service: 'ingest',
    access: 'admin',
    own: async (_, admin) => ({ path: `/api/admin/keys/${(await admin.key('read', A)).id}` }),
  },
  {
    method: 'GET',
    path: '/api/admin/audit',
    service: 'query',
    access: 'admin',
    own: async () => ({ path: '/api/admin/audit' }),
  },
  {
    method: 'GET',
    path: '/api/costs/summary',
    service: 'query',
    access: 'read',
    own: async () => ({ path: '/api/costs/summary' }),
  },
  {
    method: 'GET',
    path: '/api/costs/timeline',
    service: 'query',
    access: 'read',
    own: async () => ({ path: '/api/costs/timeline' }),
  },
  {
    method: 'GET',
    path: '/api/costs/by-agent',
    service: 'query',
    access: 'read',
    own: async () => ({ path: '/api/costs/by-agent' }),
  },
  {
    method: 'GET',
    path: '/api/costs/unpriced',
    service: 'query',
    access: 'read',
    own: async () => ({ path: '/api/costs/unpriced' }),
  },
  {
    method: 'GET',
    path: '/api/export/usage',
    service: 'query',
    access: 'read',
    own: async () => ({ path: '/api/export/usage?from=2026-11-01&to=2026-11-02&format=jsonl' }),
    other: {
      expect: 403,
      request: async () => ({ path: `/api/export/usage?from=2026-11-01&to=2026-11-02&user_id=${B}` }),
    },
  },
  {
    method: 'GET',
    path: '/api/sessions/{session_id}/cost-breakdown',
    service: 'query',
    access: 'read',
    own: async (fx) => ({ path: `/api/sessions/${fx.sessionA.id}/cost-breakdown` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/sessions/${fx.sessionB.id}/cost-breakdown` }) },
  },
  {
    method: 'GET',
    path: '/api/sessions/{session_id}/costs',
    service: 'query',
    access: 'read',
    own: async (fx) => ({ path: `/api/sessions/${fx.sessionA.id}/costs` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/sessions/${fx.sessionB.id}/costs` }) },
  },
  {
    method: 'GET',
    path: '/api/costs/live',
    service: 'query',
    access: 'read',
    own: async () => ({ path: '/api/costs/live' }),
  },
  {
    method: 'GET',
    path: '/api/sessions/{session_id}/cost-stream',
    service: 'query',
    access: 'read',
    own: async (fx) => ({ path: `/api/sessions/${fx.sessionA.id}/cost-stream` }),
    other: { expect: 404, request: async (fx) => ({ path: `/api/sessions/${fx.sessionB.id}/cost-stream` }) },
  },
  {
    method: 'GET',
    path: '/api/rates',
    service: 'query',
    access: 'read',
    own: async () => ({ path: '/api/rates?provider=deepgram' }),
  },
  {
    method: 'POST',
    path: '/api/rates/quote',
    service: 'query',
    access: 'read',
    own: async () => ({
      path: '/api/rates/quote',
      body: { provider: 'deepgram', event_type: 'stt_minutes', quantity: 2 },
    }),
  },
];

const MODES = [
  {
    name: 'the embedded process',
    start: async (env: Record<string, string>): Promise<Running> => {
      const app = await startCallmeter({ ...env, DATA_DIR: isolate('access').dataDir, LOG_LEVEL: 'warn' });
      return { ingest: app.url, query: app.url, stop: () => app.stop() };
    },
  },
  {
    name: 'ingest apart over Kafka and Redis',
    start: async (env: Record<string, string>): Promise<Running> => {
      const isolation = isolate('access-kafka');
      const [ingest, query] = (await Promise.all([
        startCallmeter(serviceEnv(isolation, { ...env, SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/ingest` })),
        startCallmeter(serviceEnv(isolation, { ...env, SERVICES: 'consumer,query' })),
      ])) as [CallmeterProcess, CallmeterProcess];
      return { ingest: ingest.url, query: query.url, stop: () => Promise.allSettled([ingest.stop(), query.stop()]) };
    },
  },
] as const;

describe.each(MODES)('AUTH_MODE=on: $name', ({ start }) => {
  let jwks: JwksServer;
  let app: Running;
  let admin: Admin;
  let fixtures: Fixtures;
  let credentials: Credential[];
  const bootstrap = { authorization: `Bearer ${ADMIN_API_KEY}` };
  const urlOf = (service: 'ingest' | 'query') => (service === 'ingest' ? app.ingest : app.query);

  async function as(
    headers: Record<string, string>,
    service: 'ingest' | 'query',
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Answer> {
    if (!path.endsWith('/cost-stream') && path !== '/api/costs/live')
      return call(urlOf(service), method, path, body, { 'x-user-id': A, ...headers });
    // A live stream stays open: its status and headers are the answer, and the reader leaves.
    const response = await fetch(`${urlOf(service)}${path}`, { headers: { 'x-user-id': A, ...headers } });
    if (response.status === 200) {
      await response.body?.cancel();
      return { status: 200, body: {}, text: '', headers: response.headers };
    }
    const text = await response.text();
    return {
      status: response.status,
      body: JSON.parse(text) as Record<string, unknown>,
      text,
      headers: response.headers,
    };
  }

  async function created(
    service: 'ingest' | 'query',
    path: string,
    body: unknown,
    headers = bootstrap,
  ): Promise<Record<string, unknown>> {
    const answer = await call(urlOf(service), 'POST', path, body, headers);
    if (answer.status >= 300) throw new Error(`${path} answered ${answer.status}: ${answer.text}`);
    return answer.body;
  }

  beforeAll(async () => {
    jwks = await startJwksServer();
    app = await start({
      AUTH_MODE: 'on',
      ADMIN_API_KEY,
      AUTH_JWKS_URL: jwks.url,
      AUTH_JWT_ISSUER: jwks.issuer,
      AUTH_KEY_REFRESH_MS: '500',
      METRICS_TOKEN: `metrics-${randomUUID()}`,
      // The table sends bad credentials to every route from one address on purpose: the limit of failed
      // authentications is test/integration/hostile-auth.test.ts's.
      AUTH_FAILURES_PER_SECOND: '0',
    });
    admin = {
      session: (user) => created('ingest', '/api/sessions/', makeSessionBody({ user_id: user })),
      agent: (user) => created('ingest', '/api/agents/', makeAgentBody({ user_id: user })),
      numberOf: async (agentId) =>
        (await created('ingest', '/api/telephony/numbers/assign', { agent_id: agentId, phone_number: phone() }))
          .phone_number as string,
      rate: async (user) =>
        (
          await created('ingest', '/api/rates', {
            user_id: user,
            provider: 'deepgram',
            event_type: 'stt_minutes',
            price: '0.002',
          })
        ).id as string,
      webhook: async (user) => (await created('ingest', '/api/webhooks', webhookBody(user))).id as string,
      budget: async (user) => (await created('ingest', '/api/budgets', budgetBody(user))).id as string,
      key: async (scope, user) => {
        const body = await created('ingest', '/api/admin/keys', {
          scope,
          ...(user === undefined ? {} : { user_id: user }),
          name: `${scope}-${user ?? 'any'}`,
        });
        return { id: body.id as string, key: body.key as string };
      },
    };
    const withNumber = async (user: string) => {
      const agent = await admin.agent(user);
      return { ...agent, phone: await admin.numberOf(agent.id as string) };
    };
    fixtures = {
      sessionA: await admin.session(A),
      sessionB: await admin.session(B),
      agentA: await withNumber(A),
      agentB: await withNumber(B),
    };
    const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
    const revoked = await admin.key('ingest');
    expect((await call(app.ingest, 'DELETE', `/api/admin/keys/${revoked.id}`, undefined, bootstrap)).status).toBe(200);
    credentials = [
      { name: 'no credential', headers: {}, scope: null, tenant: null },
      { name: 'ingest key', headers: bearer((await admin.key('ingest')).key), scope: 'ingest', tenant: null },
      // x-api-key is the other place a key may be sent.
      {
        name: 'ingest key bound to A',
        headers: { 'x-api-key': (await admin.key('ingest', A)).key },
        scope: 'ingest',
        tenant: A,
      },
      { name: 'read key bound to A', headers: bearer((await admin.key('read', A)).key), scope: 'read', tenant: A },
      { name: 'unbound read key', headers: bearer((await admin.key('read')).key), scope: 'read', tenant: null },
      { name: 'admin key', headers: bearer((await admin.key('admin')).key), scope: 'admin', tenant: null },
      { name: 'user token of A', headers: bearer(await jwks.token(A)), scope: 'read', tenant: A },
      { name: 'revoked key', headers: bearer(revoked.key), scope: null, tenant: null },
      { name: 'token with a bad signature', headers: bearer(await jwks.forged(A)), scope: null, tenant: null },
    ];
    // Keys made by ingest reach a separate query process once stored and read there (401 until then).
    const keys = credentials.filter((c) => c.scope !== null && !c.name.startsWith('user token'));
    await eventually(async () => {
      for (const key of keys)
        expect((await as(key.headers, 'query', 'GET', '/api/costs/summary')).status).not.toBe(401);
    }, 20_000);
  }, 240_000);

  afterAll(async () => {
    await app?.stop();
    await jwks?.close();
  });

  it('answers every route by the table: 401 without a valid credential, 403 without the right, 2xx with it', async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const route of ROUTES) {
      for (const credential of credentials) {
        const request = await route.own(fixtures, admin);
        const answer = await as(credential.headers, route.service, route.method, request.path, request.body);
        const want =
          credential.scope === null
            ? 401
            : ALLOWED[route.access].includes(credential.scope)
              ? (route.allowed ?? '2xx')
              : 403;
        outcomes.push(
          `${route.method} ${route.path} / ${credential.name}: ${answer.status < 300 ? '2xx' : answer.status}`,
        );
        expected.push(`${route.method} ${route.path} / ${credential.name}: ${want}`);
        if (want === 401) {
          expect(answer.headers.get('www-authenticate')).toMatch(/^Bearer/);
          if (credential.name === 'no credential') expect(answer.text).toBe('{"detail":"Not authenticated"}');
        }
        if (want === 403) expect(typeof (answer.body as { detail: unknown }).detail).toBe('string');
      }
    }
    expect(outcomes).toEqual(expected);
  }, 300_000);

  it('answers a credential bound to A that reaches for B: 404 for what it addresses, 403 for what it writes', async () => {
    const outcomes: string[] = [];
    const expected: string[] = [];
    for (const route of ROUTES.filter((r) => r.other !== undefined)) {
      for (const credential of credentials.filter((c) => c.tenant === A && ALLOWED[route.access].includes(c.scope!))) {
        const request = await route.other!.request(fixtures, admin);
        const answer = await as(credential.headers, route.service, route.method, request.path, request.body);
        const seen =
          route.other!.expect === 'empty'
            ? answer.status === 200 && answer.text === '[]'
              ? 'empty'
              : `${answer.status} ${answer.text}`
            : answer.status;
        outcomes.push(`${route.method} ${route.path} / ${credential.name}: ${seen}`);
        expected.push(`${route.method} ${route.path} / ${credential.name}: ${route.other!.expect}`);
        if (route.other!.expect === 404)
          expect(answer.text).toMatch(/"detail":"(Session|Agent|Statement) not found"|No agent found/);
      }
    }
    expect(outcomes).toEqual(expected);
  }, 300_000);

  it('acts for the bound tenant: x-user-id of another is a 403, an absent one is the credential’s', async () => {
    const readA = credentials.find((c) => c.name === 'read key bound to A')!;
    const token = credentials.find((c) => c.name === 'user token of A')!;
    for (const credential of [readA, token]) {
      const other = await call(app.query, 'GET', '/api/costs/summary', undefined, {
        ...credential.headers,
        'x-user-id': B,
      });
      expect(other.status).toBe(403);
      const own = await call(app.query, 'GET', '/api/costs/summary', undefined, credential.headers);
      expect(own.status).toBe(200);
    }
    // A batch item of another tenant is rejected alone.
    const ingestA = credentials.find((c) => c.name === 'ingest key bound to A')!;
    const batch = await call(
      app.ingest,
      'POST',
      '/api/usage/events/batch',
      [usage(fixtures.sessionA), usage(fixtures.sessionB)],
      ingestA.headers,
    );
    expect((batch.body as unknown as { status: string }[]).map((item) => item.status)).toEqual([
      'accepted',
      'rejected',
    ]);
  });

  it('reads the body before the credential and validates after it, as FastAPI orders a security dependency', async () => {
    const malformed = await fetch(`${app.ingest}/api/usage/events`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"session_id":',
    });
    expect(malformed.status).toBe(422);
    const invalid = await call(app.ingest, 'POST', '/api/usage/events', { session_id: 1 });
    expect([invalid.status, invalid.text]).toEqual([401, '{"detail":"Not authenticated"}']);
    const admin = credentials.find((c) => c.name === 'admin key')!;
    expect((await call(app.ingest, 'POST', '/api/usage/events', { session_id: 1 }, admin.headers)).status).toBe(422);
  });

  it('keeps the operational routes open, /metrics behind METRICS_TOKEN', async () => {
    for (const path of ['/healthz', '/health', '/openapi.json'])
      expect((await call(app.query, 'GET', path)).status).toBe(200);
    expect((await call(app.query, 'GET', '/metrics')).status).toBe(401);
    const document = (await call(app.query, 'GET', '/openapi.json')).body as {
      components: { securitySchemes: Record<string, unknown> };
    };
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKey', 'bearer']);
  });

  it('refuses an expired key and a token past its expiry or from another issuer', async () => {
    const body = await created('ingest', '/api/admin/keys', {
      scope: 'read',
      expires_at: new Date(Date.now() + 1_500).toISOString(),
    });
    const headers = { authorization: `Bearer ${body.key as string}` };
    expect((await call(app.ingest, 'GET', '/api/sessions/', undefined, { ...headers, 'x-user-id': A })).status).toBe(
      200,
    );
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect((await call(app.ingest, 'GET', '/api/sessions/', undefined, { ...headers, 'x-user-id': A })).status).toBe(
      401,
    );
    const expired = await jwks.token(A, { expiresIn: Math.floor(Date.now() / 1000) - 120 });
    expect(
      (await call(app.query, 'GET', '/api/costs/summary', undefined, { authorization: `Bearer ${expired}` })).status,
    ).toBe(401);
    const foreign = await jwks.token(A, { issuer: 'https://elsewhere.test' });
    expect(
      (await call(app.query, 'GET', '/api/costs/summary', undefined, { authorization: `Bearer ${foreign}` })).status,
    ).toBe(401);
  });

  it('revokes a key in every process within 5 seconds', async () => {
    const key = await admin.key('read');
    const headers = { authorization: `Bearer ${key.key}`, 'x-user-id': A };
    await eventually(
      async () => expect((await call(app.query, 'GET', '/api/costs/summary', undefined, headers)).status).toBe(200),
      5_000,
    );
    const revokedAt = Date.now();
    expect((await call(app.ingest, 'DELETE', `/api/admin/keys/${key.id}`, undefined, bootstrap)).status).toBe(200);
    expect((await call(app.ingest, 'GET', '/api/sessions/', undefined, headers)).status).toBe(401);
    await eventually(
      async () => expect((await call(app.query, 'GET', '/api/costs/summary', undefined, headers)).status).toBe(401),
      5_000,
    );
    expect(Date.now() - revokedAt).toBeLessThan(5_000);
  });

  it('verifies user tokens signed by a key the identity provider rotated in', async () => {
    await jwks.rotate();
    const rotated = await jwks.token(A);
    // jose fetches the JWKS again for a key id it lacks, at most once per 5 s.
    await eventually(
      async () =>
        expect(
          (await call(app.query, 'GET', '/api/costs/summary', undefined, { authorization: `Bearer ${rotated}` }))
            .status,
        ).toBe(200),
      12_000,
    );
  });

  it('creates, lists and revokes keys from the CLI (npm run keys)', async () => {
    const cli = (...args: string[]) =>
      promisify(execFile)(process.execPath, ['--import', 'tsx', 'infra/keys/cli.ts', ...args], {
        cwd: path.resolve(import.meta.dirname, '../..'),
        env: { PATH: process.env.PATH ?? '', CALLMETER_URL: app.ingest, CALLMETER_ADMIN_KEY: ADMIN_API_KEY },
      });
    const made = JSON.parse((await cli('create', '--scope', 'ingest', '--user-id', A, '--name', 'worker')).stdout) as {
      id: string;
      key: string;
      scope: string;
      user_id: string;
    };
    expect([made.scope, made.user_id, made.key.startsWith('cm_live_')]).toEqual(['ingest', A, true]);
    const headers = { authorization: `Bearer ${made.key}`, 'x-user-id': A };
    expect((await call(app.ingest, 'GET', '/api/sessions/', undefined, headers)).status).toBe(200);
    const listed = JSON.parse((await cli('list')).stdout) as { id: string; key?: string }[];
    expect(listed.find((key) => key.id === made.id)).toMatchObject({ id: made.id, name: 'worker' });
    expect(listed.some((key) => 'key' in key || 'secret_hash' in key)).toBe(false);
    await cli('revoke', made.id);
    expect((await call(app.ingest, 'GET', '/api/sessions/', undefined, headers)).status).toBe(401);
    await expect(cli('create')).rejects.toMatchObject({ code: 2 });
  });

  it('writes key and rate changes to the audit log with the acting key', async () => {
    const adminKey = credentials.find((c) => c.name === 'admin key')!;
    const rateId = await admin.rate(A);
    expect((await call(app.ingest, 'DELETE', `/api/rates/${rateId}`, undefined, bootstrap)).status).toBe(200);
    const made = await created(
      'ingest',
      '/api/admin/keys',
      { scope: 'ingest', user_id: B },
      adminKey.headers as typeof bootstrap,
    );
    await eventually(async () => {
      const audit = (await call(app.query, 'GET', `/api/admin/audit?user_id=${B}`, undefined, bootstrap))
        .body as unknown as {
        action: string;
        subject_id: string;
        actor_key_id: string;
        detail: Record<string, unknown>;
      }[];
      const entry = audit.find((item) => item.subject_id === made.id);
      expect(entry).toMatchObject({ action: 'key_created', detail: { scope: 'ingest', user_id: B } });
      expect(entry!.actor_key_id).not.toBe('bootstrap');
      expect(JSON.stringify(audit)).not.toContain(made.key as string);
      expect(audit.some((item) => item.action === 'rate_created' || item.action === 'key_revoked')).toBe(false);
    }, 15_000);
    await eventually(async () => {
      const all = (await call(app.query, 'GET', '/api/admin/audit?limit=1000', undefined, bootstrap))
        .body as unknown as { action: string }[];
      expect(new Set(all.map((item) => item.action))).toEqual(
        new Set([
          'budget_created',
          'budget_updated',
          'budget_deleted',
          'key_created',
          'key_revoked',
          'rate_created',
          'rate_ended',
          'time_zone_set',
          'webhook_created',
          'webhook_secret_rotated',
          'webhook_deleted',
        ]),
      );
      // The webhook cases' changes are audited without their signing secrets.
      expect(JSON.stringify(all)).not.toContain('whsec_');
    }, 15_000);
  });
});
