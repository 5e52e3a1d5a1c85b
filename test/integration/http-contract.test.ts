import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { examplesOutsideTheirSchemas, expectDocumented } from '../support/documented-answers.ts';
import { isolate } from '../support/harness.ts';

/** The raw answer, which must also be one the process's /openapi.json describes. */
async function raw(url: string, init: RequestInit = {}) {
  const response = await fetch(url, { redirect: 'manual', ...init });
  const answer = {
    status: response.status,
    type: response.headers.get('content-type'),
    headers: response.headers,
    text: await response.text(),
  };
  const { origin, pathname, search } = new URL(url);
  await expectDocumented(origin, init.method ?? 'GET', `${pathname}${search}`, {
    status: answer.status,
    contentType: answer.type,
    text: answer.text,
  });
  return answer;
}

describe('the HTTP contract of the embedded process', () => {
  let app: CallmeterProcess;

  beforeAll(async () => {
    app = await startCallmeter({ DATA_DIR: isolate('contract').dataDir });
  });

  afterAll(async () => {
    await app?.stop();
  });

  it('publishes an OpenAPI 3.1 document of every route, with bodies, parameters and error shapes', async () => {
    const document = JSON.parse((await raw(`${app.url}/openapi.json`)).text) as {
      openapi: string;
      paths: Record<string, Record<string, { responses: Record<string, unknown>; requestBody?: unknown }>>;
    };
    expect(document.openapi).toBe('3.1.0');
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual([
      'DELETE /api/admin/keys/{key_id}',
      'DELETE /api/agents/{agent_id}',
      'DELETE /api/budgets/{budget_id}',
      'DELETE /api/rates/{rate_id}',
      'DELETE /api/webhooks/{webhook_id}',
      'GET /api/admin/audit',
      'GET /api/admin/keys',
      'GET /api/agents/',
      'GET /api/agents/{agent_id}',
      'GET /api/budgets',
      'GET /api/budgets/{budget_id}',
      'GET /api/costs/by-agent',
      'GET /api/costs/live',
      'GET /api/costs/summary',
      'GET /api/costs/timeline',
      'GET /api/costs/unpriced',
      'GET /api/export/usage',
      'GET /api/periods/{user_id}/settings',
      'GET /api/rates',
      'GET /api/sessions/',
      'GET /api/sessions/by-room/{room_name}',
      'GET /api/sessions/{session_id}',
      'GET /api/sessions/{session_id}/analysis',
      'GET /api/sessions/{session_id}/budget',
      'GET /api/sessions/{session_id}/cost-breakdown',
      'GET /api/sessions/{session_id}/cost-stream',
      'GET /api/sessions/{session_id}/costs',
      'GET /api/sessions/{session_id}/transcripts',
      'GET /api/statements/{user_id}/{period}',
      'GET /api/telephony/lookup',
      'GET /api/telephony/numbers/{agent_id}',
      'GET /api/webhooks',
      'GET /api/webhooks/{webhook_id}',
      'GET /api/webhooks/{webhook_id}/deliveries',
      'PATCH /api/agents/{agent_id}',
      'PATCH /api/budgets/{budget_id}',
      'PATCH /api/periods/{user_id}/settings',
      'PATCH /api/sessions/{session_id}',
      'POST /api/admin/keys',
      'POST /api/agents/',
      'POST /api/budgets',
      'POST /api/periods/{user_id}/{period}/close',
      'POST /api/periods/{user_id}/{period}/reopen',
      'POST /api/rates',
      'POST /api/rates/quote',
      'POST /api/rates/reprice',
      'POST /api/sessions/',
      'POST /api/sessions/by-room/{room_name}/end',
      'POST /api/sessions/by-room/{room_name}/transcripts',
      'POST /api/sessions/{session_id}/transcripts',
      'POST /api/telephony/numbers/assign',
      'POST /api/telephony/numbers/release',
      'POST /api/usage/events',
      'POST /api/usage/events/batch',
      'POST /api/usage/events/{event_id}/amend',
      'POST /api/usage/events/{event_id}/void',
      'POST /api/webhooks',
      'POST /api/webhooks/{webhook_id}/deliveries/{message_id}/redeliver',
      'POST /api/webhooks/{webhook_id}/rotate-secret',
    ]);
    const create = document.paths['/api/sessions/']!.post!;
    expect(Object.keys(create.responses)).toEqual(['201', '400', '402', '413', '422', '429', '503']);
    expect(create.requestBody).toEqual({
      required: true,
      content: { 'application/json': { schema: { $ref: '#/components/schemas/SessionCreate' } } },
    });
    expect(Object.keys(document.paths['/api/sessions/']!.get!.responses)).toEqual(['200', '401', '422', '503']);
    // A 204 documents no body, so an API fuzzer expects none.
    expect(document.paths['/api/agents/{agent_id}']!.delete!.responses['204']).toEqual({
      description: 'Successful Response',
    });
    expect(
      Object.keys((document.paths['/api/costs/timeline']!.get!.responses['200'] as { content: object }).content),
    ).toEqual(['application/json', 'text/csv']);
    // Each example is an answer the route could give: its schema accepts it.
    expect(await examplesOutsideTheirSchemas(app.url)).toEqual([]);
  });

  it('serves a browsable /docs page whose assets come from this server', async () => {
    const page = await raw(`${app.url}/docs`);
    expect([page.status, page.type]).toEqual([200, 'text/html; charset=utf-8']);
    const assets = [...page.text.matchAll(/(?:href|src)="([^"]+)"/g)].map((m) => m[1]!);
    expect(assets.every((asset) => asset.startsWith('/docs/assets/'))).toBe(true);
    for (const asset of assets) expect((await raw(`${app.url}${asset}`)).status).toBe(200);
    expect((await raw(`${app.url}/docs/assets/package.json`)).status).toBe(404);
  });

  it('answers a body over 1 MiB with 413', async () => {
    const body = JSON.stringify({ room_name: 'r', user_id: 'u', session_data: { blob: 'x'.repeat(1024 * 1024) } });
    const answer = await raw(`${app.url}/api/sessions/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    expect([answer.status, answer.text]).toEqual([
      413,
      '{"detail":"Request body too large: the limit is 1048576 bytes"}',
    ]);
  });

  it('requires x-user-id with a 401, after validating the query', async () => {
    for (const headers of [{}, { 'x-user-id': '' }] as Record<string, string>[]) {
      const answer = await raw(`${app.url}/api/sessions/`, { headers });
      expect([answer.status, answer.type, answer.text]).toEqual([
        401,
        'application/json',
        '{"detail":"User ID required"}',
      ]);
    }
    const invalid = await raw(`${app.url}/api/sessions/?limit=0`);
    expect([invalid.status, invalid.text]).toEqual([
      422,
      '{"detail":[{"type":"greater_than_equal","loc":["query","limit"],"msg":"Input should be greater than or equal to 1","input":"0","ctx":{"ge":1}}]}',
    ]);
    const tooLarge = await raw(`${app.url}/api/sessions/?limit=1001`, { headers: { 'x-user-id': 'u' } });
    expect([tooLarge.status, tooLarge.text]).toEqual([
      422,
      '{"detail":[{"type":"less_than_equal","loc":["query","limit"],"msg":"Input should be less than or equal to 1000","input":"1001","ctx":{"le":1000}}]}',
    ]);
  });

  it('answers a body that is not UTF-8 with 400, and a missing slash with a 307 keeping the query', async () => {
    const notUtf8 = await raw(`${app.url}/api/sessions/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Buffer.from([0x7b, 0xff, 0xfe, 0x7d]),
    });
    expect([notUtf8.status, notUtf8.text]).toEqual([400, '{"detail":"There was an error parsing the body"}']);
    const redirect = await raw(`${app.url}/api/sessions?page=2`, { method: 'POST' });
    expect([redirect.status, redirect.headers.get('location'), redirect.text]).toEqual([
      307,
      '/api/sessions/?page=2',
      '',
    ]);
  });

  it('creates a session with 201 and the compat.md key order, and reads it back', async () => {
    const created = await raw(`${app.url}/api/sessions/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"room_name":"r1","user_id":"u1","metadata":{"a":1}}',
    });
    expect(created.status).toBe(201);
    const session = JSON.parse(created.text) as Record<string, unknown>;
    expect(Object.keys(session)).toEqual([
      'room_name',
      'session_data',
      'id',
      'status',
      'started_at',
      'ended_at',
      'duration',
      'user_id',
      'agent_id',
      'agent_name',
      'call_direction',
      'outbound_phone_number',
      'call_status',
      'analysis',
      'transferred_to',
      'transfer_type',
      'transfer_timestamp',
      'created_at',
      'updated_at',
      // Extra keys after compat.md's, read by the old dashboard.
      'direction',
      'metadata',
    ]);
    expect(session).toMatchObject({
      status: 'ACTIVE',
      session_data: { a: 1 },
      agent_id: null,
      direction: null,
      metadata: { a: 1 },
    });
    expect(session.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(session.created_at).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    const read = await raw(`${app.url}/api/sessions/${String(session.id)}`);
    expect(read.text).toBe(created.text);
  });

  it('never answers random JSON-ish bodies with a 5xx or a body outside the compatible shapes', async () => {
    const jsonish = fc.oneof(
      fc.json().map((text) => Buffer.from(text)),
      fc.jsonValue().map((value) => Buffer.from(JSON.stringify(value ?? null))),
      fc.string().map((text) => Buffer.from(text)),
      fc.uint8Array({ maxLength: 64 }).map((bytes) => Buffer.from(bytes)),
      fc
        .record({
          room_name: fc.anything(),
          user_id: fc.anything(),
          status: fc.anything(),
          duration: fc.anything(),
          ended_at: fc.anything(),
        })
        .map((v) => Buffer.from(JSON.stringify(v))),
      fc
        .constantFrom(
          'NaN',
          '[1e999]',
          '{"a":' + '['.repeat(600),
          '\ufeff{}',
          '{"duration": 123456789012345678901234567890}',
        )
        .map((text) => Buffer.from(text)),
    );
    const target = fc.constantFrom(
      ['POST', '/api/sessions/'],
      ['PATCH', '/api/sessions/00000000-0000-4000-8000-000000000000'],
      ['POST', '/api/telephony/numbers/release'],
      ['POST', '/api/telephony/numbers/assign'],
    );
    const contentType = fc.constantFrom(
      'application/json',
      'application/json; charset=utf-8',
      'text/plain',
      'application/x-www-form-urlencoded',
      'application/geo+json',
      undefined,
    );
    await fc.assert(
      fc.asyncProperty(target, jsonish, contentType, async ([method, path], body, type) => {
        const answer = await raw(`${app.url}${path}`, {
          method,
          body,
          headers: type === undefined ? {} : { 'content-type': type },
        });
        expect(answer.status).toBeLessThan(500);
        expect(answer.type).toBe('application/json');
        const parsed = JSON.parse(answer.text) as { detail?: unknown };
        if (answer.status >= 400) {
          const detail = parsed.detail;
          const wellFormed =
            typeof detail === 'string' ||
            (Array.isArray(detail) &&
              detail.every(
                (item: Record<string, unknown>) => Object.keys(item).slice(0, 4).join() === 'type,loc,msg,input',
              ));
          expect(wellFormed).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });
});
