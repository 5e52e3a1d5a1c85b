import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { createHttpApp, type RouteRegistrar } from './create-app.ts';
import { sendJson } from './send-json.ts';
import { currentSignal, untilAborted } from '../abortable.ts';

const servers: { close: () => void }[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

async function serve(register: RouteRegistrar, corsOrigins: string[] = [], trustProxy = false): Promise<string> {
  const app = createHttpApp({
    service: 'test',
    log: createLogger('silent'),
    routes: [register],
    checks: [],
    corsOrigins,
    trustProxy,
  });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the HTTP app', () => {
  it('answers an unexpected error with a generic 500 that names the request id and leaks nothing', async () => {
    const url = await serve((router) =>
      router.get('/boom', () => {
        throw new Error('password=hunter2 at db.internal');
      }),
    );
    const response = await fetch(`${url}/boom`, { headers: { 'x-request-id': 'req-123' } });
    expect(response.status).toBe(500);
    expect(response.headers.get('x-request-id')).toBe('req-123');
    expect(await response.text()).toBe('{"detail":"Internal Server Error","request_id":"req-123"}');
  });

  it('answers a ClickHouse server that is down or over a read limit with 503 and Retry-After, not a 500', async () => {
    class ClickHouseError extends Error {
      constructor(readonly code: string) {
        super('Timeout exceeded: elapsed 20.1 seconds, maximum: 20');
      }
    }
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.0.0.5:8123'), { code: 'ECONNREFUSED' });
    const url = await serve((router) => {
      router.get('/slow', () => {
        throw new ClickHouseError('159');
      });
      router.get('/down', () => {
        throw refused;
      });
      router.get('/bad-sql', () => {
        throw new ClickHouseError('62');
      });
    });
    for (const path of ['/slow', '/down']) {
      const response = await fetch(`${url}${path}`);
      expect([response.status, response.headers.get('retry-after'), await response.text()]).toEqual([
        503,
        '1',
        '{"detail":"Database unavailable, try again"}',
      ]);
    }
    // A syntax error is ours: a defect, the generic 500.
    expect((await fetch(`${url}/bad-sql`)).status).toBe(500);
  });

  it('maps AppError codes to their status with the detail body and headers', async () => {
    const url = await serve((router) =>
      router
        .get('/conflict', () => {
          throw AppError.of('CONFLICT', 'Cannot move session from COMPLETED to ACTIVE');
        })
        .get('/busy', () => {
          throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Kafka is unavailable', { headers: { 'Retry-After': '5' } });
        })
        .get('/store-down', () => {
          throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Session store unavailable');
        })
        .get('/flooded', () => {
          throw AppError.of('TOO_MANY_REQUESTS', 'Too many changes of this session are waiting; retry later');
        }),
    );
    const conflict = await fetch(`${url}/conflict`);
    expect([conflict.status, await conflict.text()]).toEqual([
      409,
      '{"detail":"Cannot move session from COMPLETED to ACTIVE"}',
    ]);
    const busy = await fetch(`${url}/busy`);
    expect([busy.status, busy.headers.get('retry-after'), busy.headers.get('content-type')]).toEqual([
      503,
      '5',
      'application/json',
    ]);
    const down = await fetch(`${url}/store-down`);
    expect([down.status, down.headers.get('retry-after'), await down.text()]).toEqual([
      503,
      '1',
      '{"detail":"Session store unavailable"}',
    ]);
    const flooded = await fetch(`${url}/flooded`);
    expect([flooded.status, flooded.headers.get('retry-after'), await flooded.text()]).toEqual([
      429,
      '1',
      '{"detail":"Too many changes of this session are waiting; retry later"}',
    ]);
  });

  it('answers an INTERNAL AppError with the generic 500, not its detail', async () => {
    const url = await serve((router) =>
      router.get('/invariant', () => {
        throw AppError.of('INTERNAL', 'invalid session revision of s-1: version 3 -> 5');
      }),
    );
    const response = await fetch(`${url}/invariant`, { headers: { 'x-request-id': 'req-9' } });
    expect([response.status, await response.text()]).toEqual([
      500,
      '{"detail":"Internal Server Error","request_id":"req-9"}',
    ]);
  });

  it('names the dependency that is down in /readyz, never its raw error', async () => {
    const app = createHttpApp({
      service: 'test',
      log: createLogger('silent'),
      routes: [],
      corsOrigins: [],
      checks: [
        {
          name: 'redis',
          check: () => Promise.reject(new Error('connect ECONNREFUSED 10.0.0.7:6379 password=hunter2')),
        },
        { name: 'kafka', check: () => Promise.resolve() },
      ],
    });
    const server = app.listen(0, '127.0.0.1');
    servers.push(server);
    await new Promise((resolve) => server.once('listening', resolve));
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/readyz`);
    expect([response.status, await response.text()]).toEqual([
      503,
      '{"detail":"redis unavailable","service":"test","checks":{"redis":"unavailable","kafka":"ok"}}',
    ]);
  });

  it('takes the client address (what the per-address limits count) from the socket, or with TRUST_PROXY from the entry the proxy appended', async () => {
    const addressOf = (router: Parameters<RouteRegistrar>[0]) => router.get('/ip', (ctx) => sendJson(ctx, 200, ctx.ip));
    // The client wrote the first entry itself; the proxy appended the address it was reached from.
    const forwarded = { 'x-forwarded-for': '203.0.113.9, 198.51.100.7' };
    const direct = await serve(addressOf);
    expect(await (await fetch(`${direct}/ip`, { headers: forwarded })).json()).toBe('127.0.0.1');
    const behindProxy = await serve(addressOf, [], true);
    expect(await (await fetch(`${behindProxy}/ip`, { headers: forwarded })).json()).toBe('198.51.100.7');
    expect(await (await fetch(`${behindProxy}/ip`)).json()).toBe('127.0.0.1');
  });

  it('replaces an unsafe incoming request id with a fresh one', async () => {
    const url = await serve(() => undefined);
    const response = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});

// The route order of the replaced service: the list before create, the read before the update.
const sessionRoutes: RouteRegistrar = (router) => {
  const ok = (ctx: Parameters<Parameters<typeof router.get>[1]>[0]) => sendJson(ctx, 200, { path: ctx.path });
  router
    .get('/api/sessions/', ok)
    .post('/api/sessions/', ok)
    .get('/api/sessions/:session_id', ok)
    .patch('/api/sessions/:session_id', ok);
  router.get('/api/costs/summary', ok).post('/api/telephony/numbers/release', ok);
};

describe('FastAPI routing decisions', () => {
  it('answers a known path with another method 405, allowing only the first matching route', async () => {
    const url = await serve(sessionRoutes);
    for (const [method, path, allow] of [
      ['PATCH', '/api/sessions/', 'GET'],
      ['DELETE', '/api/sessions/abc', 'GET'],
      ['GET', '/api/telephony/numbers/release', 'POST'],
    ]) {
      const response = await fetch(`${url}${path}`, { method });
      expect([response.status, response.headers.get('allow'), await response.text()]).toEqual([
        405,
        allow,
        '{"detail":"Method Not Allowed"}',
      ]);
    }
  });

  it('never serves HEAD: 405 with an empty body', async () => {
    const url = await serve(sessionRoutes);
    const response = await fetch(`${url}/api/costs/summary`, { method: 'HEAD' });
    expect([response.status, response.headers.get('allow'), await response.text()]).toEqual([405, 'GET', '']);
  });

  it("answers HEAD with the 405's JSON headers, as Starlette does (the body's type and length, no body)", async () => {
    const url = await serve(sessionRoutes);
    const response = await fetch(`${url}/api/sessions/abc`, { method: 'HEAD' });
    const headers = ['allow', 'content-type', 'content-length'].map((name) => response.headers.get(name));
    expect([response.status, ...headers]).toEqual([405, 'GET', 'application/json', '31']);
  });

  it('redirects 307 to the path with the trailing slash toggled, keeping the query', async () => {
    const url = await serve(sessionRoutes);
    const added = await fetch(`${url}/api/sessions?page=2&limit=5`, { method: 'POST', redirect: 'manual' });
    expect([
      added.status,
      added.headers.get('location'),
      added.headers.get('content-length'),
      await added.text(),
    ]).toEqual([307, '/api/sessions/?page=2&limit=5', '0', '']);
    const removed = await fetch(`${url}/api/costs/summary/`, { redirect: 'manual' });
    expect([removed.status, removed.headers.get('location')]).toEqual([307, '/api/costs/summary']);
  });

  it('builds the 307 Location from the request path, whatever the Host header says', async () => {
    const url = new URL(await serve(sessionRoutes));
    const location = await new Promise<string | undefined>((resolve, reject) => {
      const request = http.request(
        {
          host: url.hostname,
          port: url.port,
          path: '/api/sessions?page=2',
          method: 'POST',
          headers: { host: 'evil.example' },
        },
        (response) => {
          response.resume();
          resolve(response.headers.location);
        },
      );
      request.on('error', reject);
      request.end();
    });
    expect(location).toBe('/api/sessions/?page=2');
  });

  it('follows the relative 307 to the toggled path on the same server', async () => {
    const url = await serve(sessionRoutes);
    const followed = await fetch(`${url}/api/costs/summary/`);
    expect([followed.status, followed.url]).toEqual([200, `${url}/api/costs/summary`]);
  });

  it('answers 404 {"detail":"Not Found"} when no route matches either way, and matches case exactly', async () => {
    const url = await serve(sessionRoutes);
    for (const path of ['/api/nothing', '/API/costs/summary', '/api/sessions/a/b']) {
      const response = await fetch(`${url}${path}`);
      expect([response.status, response.headers.get('content-type'), await response.text()]).toEqual([
        404,
        'application/json',
        '{"detail":"Not Found"}',
      ]);
    }
  });
});

describe('CORS for the dashboards', () => {
  const dashboard = 'https://dash.example.com';

  it('answers a preflight from an allowed origin with credentials allowed and the asked headers', async () => {
    const url = await serve(sessionRoutes, [dashboard]);
    const response = await fetch(`${url}/api/costs/summary`, {
      method: 'OPTIONS',
      headers: {
        origin: dashboard,
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'x-user-id',
      },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe(dashboard);
    expect(response.headers.get('access-control-allow-credentials')).toBe('true');
    expect(response.headers.get('access-control-allow-headers')).toBe('x-user-id');
    expect(response.headers.get('access-control-allow-methods')).toContain('PATCH');
  });

  it('refuses a preflight from an unknown origin and adds no CORS header to its requests', async () => {
    const url = await serve(sessionRoutes, [dashboard]);
    const preflight = await fetch(`${url}/api/costs/summary`, {
      method: 'OPTIONS',
      headers: { origin: 'https://evil.example', 'access-control-request-method': 'GET' },
    });
    expect([preflight.status, await preflight.text()]).toEqual([400, 'Disallowed CORS origin']);
    const simple = await fetch(`${url}/api/costs/summary`, { headers: { origin: 'https://evil.example' } });
    expect(simple.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('marks simple and error responses to an allowed origin', async () => {
    const url = await serve(sessionRoutes, [dashboard]);
    const missing = await fetch(`${url}/api/nothing`, { headers: { origin: dashboard } });
    expect([missing.status, missing.headers.get('access-control-allow-origin'), missing.headers.get('vary')]).toEqual([
      404,
      dashboard,
      'Origin',
    ]);
  });

  it('answers "*" without credentials when any origin is allowed', async () => {
    const url = await serve(sessionRoutes, ['*']);
    const preflight = await fetch(`${url}/api/costs/summary`, {
      method: 'OPTIONS',
      headers: { origin: 'https://any.example', 'access-control-request-method': 'GET' },
    });
    expect([
      preflight.status,
      preflight.headers.get('access-control-allow-origin'),
      preflight.headers.get('access-control-allow-credentials'),
    ]).toEqual([200, '*', null]);
    const simple = await fetch(`${url}/api/nothing`, { headers: { origin: 'https://any.example' } });
    expect([
      simple.headers.get('access-control-allow-origin'),
      simple.headers.get('access-control-allow-credentials'),
    ]).toEqual(['*', null]);
  });

  it('allows credentials only for an origin of the list', async () => {
    const url = await serve(sessionRoutes, [dashboard]);
    const simple = await fetch(`${url}/api/nothing`, { headers: { origin: dashboard } });
    expect([
      simple.headers.get('access-control-allow-origin'),
      simple.headers.get('access-control-allow-credentials'),
    ]).toEqual([dashboard, 'true']);
  });

  it('aborts the signal a request runs under when its client goes away, and not when it is answered', async () => {
    const signals: AbortSignal[] = [];
    let seen = () => {};
    const cancelled = new Promise<unknown>((resolve) => (seen = () => resolve(undefined)));
    const url = await serve((router) => {
      router.get('/wait', async () => {
        const signal = currentSignal()!;
        signals.push(signal);
        await untilAborted(new Promise(() => {}), signal).catch(() => seen());
      });
      router.get('/quick', (ctx) => {
        signals.push(currentSignal()!);
        sendJson(ctx, 200, {});
      });
    });
    const leaving = new AbortController();
    const request = fetch(`${url}/wait`, { signal: leaving.signal }).catch(() => null);
    while (signals.length === 0) await new Promise((resolve) => setTimeout(resolve, 5));
    leaving.abort();
    await request;
    await cancelled;
    expect(signals[0]!.aborted).toBe(true);
    await (await fetch(`${url}/quick`)).text();
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(signals[1]!.aborted).toBe(false);
  });
});
