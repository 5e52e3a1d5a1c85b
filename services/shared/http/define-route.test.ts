import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { costTimelineQuery, sessionListQuery } from '../../../schemas/http/query-params.ts';
import { closedObject, money, nullable, text } from '../../../schemas/http/response-parts.ts';
import { usageEventBody } from '../../../schemas/http/usage-event.ts';
import { createLogger } from '../logger.ts';
import { createHttpApp } from './create-app.ts';
import { defineRoute, type Route } from './define-route.ts';

/**
 * The request layer as production runs it: routes built with defineRoute and served by the app,
 * answers read as bytes off the socket (the same checks as test-support/wire-bytes.ts, through the
 * real body reading, validation order, 401 and error middleware).
 */
const servers: { close: () => void }[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

async function serve(routes: readonly Route[]): Promise<string> {
  const app = createHttpApp({
    service: 'test',
    log: createLogger('silent'),
    routes: routes.map((route) => route.register),
    checks: [],
    corsOrigins: [],
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** The test routes answer whatever they are given. */
const ANY_ANSWER = { schema: { description: 'anything' } } as const;
const echo = {
  method: 'GET',
  access: 'read',
  summary: 'echo',
  tags: [],
  requireUserId: true,
  response: ANY_ANSWER,
  handle: async (input: { query: unknown }) => input.query,
} as const;
const timeline = defineRoute({ ...echo, path: '/api/costs/timeline', request: { query: costTimelineQuery } });
const sessionList = defineRoute({ ...echo, path: '/api/sessions/', request: { query: sessionListQuery } });
const usage = defineRoute({
  method: 'POST',
  path: '/api/usage/events',
  access: 'ingest',
  summary: 'usage',
  tags: [],
  status: 201,
  request: { body: usageEventBody },
  response: ANY_ANSWER,
  handle: async () => ({}),
});

async function wire(response: Response) {
  return { status: response.status, type: response.headers.get('content-type'), body: await response.text() };
}

describe('a route built with defineRoute', () => {
  it('validates every query field, in declaration order, before the 401 of a missing x-user-id', async () => {
    const url = await serve([timeline]);
    const answer = await wire(
      await fetch(`${url}/api/costs/timeline?tz=Nowhere/Else&start_date=garbage&period=hourly`),
    );
    expect(answer).toEqual({
      status: 422,
      type: 'application/json',
      body:
        '{"detail":[{"type":"string_pattern_mismatch","loc":["query","period"],"msg":"String should match pattern \'^(daily|weekly|monthly)$\'","input":"hourly","ctx":{"pattern":"^(daily|weekly|monthly)$"}},' +
        '{"type":"datetime_from_date_parsing","loc":["query","start_date"],"msg":"Input should be a valid datetime or date, input is too short","input":"garbage","ctx":{"error":"input is too short"}},' +
        '{"type":"value_error","loc":["query","tz"],"msg":"Value error, unknown time zone \'Nowhere/Else\': use an IANA name such as \'Asia/Kolkata\'","input":"Nowhere/Else","ctx":{"error":{}}}]}',
    });
  });

  it('answers 401 once the query is valid and x-user-id is missing or empty', async () => {
    const url = await serve([timeline]);
    for (const headers of [{}, { 'x-user-id': '' }] as Record<string, string>[]) {
      expect(
        await wire(await fetch(`${url}/api/costs/timeline?tz=Asia/Kathmandu&start_date=2026-11-01`, { headers })),
      ).toEqual({ status: 401, type: 'application/json', body: '{"detail":"User ID required"}' });
    }
  });

  it('takes the empty dates the dashboard sends with its session list as no dates', async () => {
    const url = await serve([sessionList]);
    const answer = await wire(
      await fetch(`${url}/api/sessions/?page=1&limit=10&start_date=&end_date=`, { headers: { 'x-user-id': 'user-1' } }),
    );
    expect(answer).toEqual({ status: 200, type: 'application/json', body: '{"page":1,"limit":10}' });
    const bad = await wire(
      await fetch(`${url}/api/sessions/?start_date=yesterday`, { headers: { 'x-user-id': 'user-1' } }),
    );
    expect(bad.body).toBe(
      '{"detail":[{"type":"datetime_from_date_parsing","loc":["query","start_date"],"msg":"Input should be a valid datetime or date, input is too short","input":"yesterday","ctx":{"error":"input is too short"}}]}',
    );
  });

  it('answers a body over 1 MiB with 413 and one that is not UTF-8 with 400, as bytes', async () => {
    const url = await serve([usage]);
    const post = (body: Blob | string) =>
      fetch(`${url}/api/usage/events`, { method: 'POST', headers: { 'content-type': 'application/json' }, body });
    const large = await wire(await post(`{"pad":"${'x'.repeat(1024 * 1024)}"}`));
    expect([large.status, large.type]).toEqual([413, 'application/json']);
    expect(JSON.parse(large.body)).toEqual({ detail: expect.any(String) });
    expect(await wire(await post(new Blob([new Uint8Array([0x7b, 0xff, 0x7d])])))).toEqual({
      status: 400,
      type: 'application/json',
      body: '{"detail":"There was an error parsing the body"}',
    });
  });
});

describe('the answer of a route built with defineRoute', () => {
  const answer = { schema: closedObject({ total_cost: money, note: nullable(text) }) } as const;
  const base = { method: 'GET', path: '/api/costs/total', access: 'read', summary: 'total', tags: [] } as const;
  const total = { total_cost: '0.0000006', note: null };

  it('is typed by its response schema: another type, or a field the schema lacks, does not compile', async () => {
    const route = defineRoute({ ...base, response: answer, handle: async () => total });
    // @ts-expect-error money is an exact decimal string in the schema, never a number
    defineRoute({ ...base, response: answer, handle: async () => ({ ...total, total_cost: 6e-7 }) });
    const withMore = { ...total, secret: 'x' };
    // @ts-expect-error `secret` is not in the schema: the document would not describe the answer
    defineRoute({ ...base, response: answer, handle: async () => withMore });
    // @ts-expect-error a route without a response schema answers no body
    defineRoute({ ...base, handle: async () => total });
    const url = await serve([route]);
    expect(await (await fetch(`${url}/api/costs/total`)).json()).toEqual(total);
  });
});
