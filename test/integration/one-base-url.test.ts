import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort, waitForPort } from '../../infra/local/free-port.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { EventStreamReader } from '../support/event-stream-reader.ts';
import { eventually, isolate, serviceEnv } from '../support/harness.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const CADDYFILE = path.join(ROOT, 'infra/proxy/Caddyfile');
const NOT_A_ROUTE = '{"detail":"Not Found"}';

interface Operation {
  readonly method: string;
  readonly path: string;
}

async function operationsOf(url: string): Promise<Operation[]> {
  const document = (await call(url, 'GET', '/openapi.json')).body as unknown as {
    paths: Record<string, Record<string, unknown>>;
  };
  return Object.entries(document.paths).flatMap(([route, methods]) =>
    Object.keys(methods).map((method) => ({ method: method.toUpperCase(), path: route })),
  );
}

/** The route with every path parameter filled: enough to reach the route, whatever it then answers. */
function concrete(route: string): string {
  return route.replace(/\{[^}]+\}/g, '00000000-0000-4000-8000-000000000000');
}

async function send(base: string, { method, path: route }: Operation): Promise<{ status: number; text: string }> {
  const abort = new AbortController();
  const response = await fetch(`${base}${concrete(route)}`, {
    method,
    headers: { 'x-user-id': 'proxy-user', ...(method === 'GET' ? {} : { 'content-type': 'application/json' }) },
    body: method === 'GET' || method === 'DELETE' ? undefined : '{}',
    signal: abort.signal,
  });
  // A live stream stays open: its status is the answer.
  if ((response.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
    abort.abort();
    return { status: response.status, text: '' };
  }
  return { status: response.status, text: await response.text() };
}

describe('one base URL: Caddy in front of ingest and query (infra/proxy/Caddyfile)', () => {
  let ingest: CallmeterProcess;
  let query: CallmeterProcess;
  let caddy: ChildProcess;
  let proxy: string;
  let caddyOutput = '';

  beforeAll(async () => {
    const isolation = isolate('one-url');
    [ingest, query] = await Promise.all([
      startCallmeter(serviceEnv(isolation, { SERVICES: 'ingest', DATA_DIR: `${isolation.dataDir}/ingest` })),
      startCallmeter(serviceEnv(isolation, { SERVICES: 'consumer,query' })),
    ]);
    const port = await freePort();
    caddy = spawn('caddy', ['run', '--config', CADDYFILE, '--adapter', 'caddyfile'], {
      env: {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        PROXY_PORT: String(port),
        INGEST_UPSTREAMS: ingest.url.replace('http://', ''),
        QUERY_UPSTREAMS: query.url.replace('http://', ''),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    caddy.stdout?.on('data', (chunk: Buffer) => (caddyOutput += chunk.toString()));
    caddy.stderr?.on('data', (chunk: Buffer) => (caddyOutput += chunk.toString()));
    await waitForPort(port, 20_000).catch((error: unknown) => {
      throw new Error(`caddy did not start: ${String(error)}\n${caddyOutput}`);
    });
    proxy = `http://127.0.0.1:${port}`;
  }, 180_000);

  afterAll(async () => {
    caddy?.kill('SIGTERM');
    await Promise.all([ingest?.stop(), query?.stop()]);
  });

  it('reaches the service that owns each route of both services, which the other one does not serve', async () => {
    const owned = [
      ...(await operationsOf(ingest.url)).map((operation) => ({ ...operation, owner: ingest, other: query })),
      ...(await operationsOf(query.url)).map((operation) => ({ ...operation, owner: query, other: ingest })),
    ].filter((operation) => operation.path.startsWith('/api/'));
    expect(owned.length).toBeGreaterThan(30);
    const missed: string[] = [];
    for (const operation of owned) {
      // The other service does not have the route (so the check below can fail) ...
      const elsewhere = await send(operation.other.url, operation);
      const ownedHere = !(elsewhere.status === 404 && elsewhere.text === NOT_A_ROUTE) && elsewhere.status !== 405;
      // ... and through the proxy it is answered by a service that has it.
      const through = await send(proxy, operation);
      const reached = !(through.status === 404 && through.text === NOT_A_ROUTE) && through.status !== 405;
      if (ownedHere || !reached)
        missed.push(`${operation.method} ${operation.path}: ${through.status} ${through.text}`);
    }
    expect(missed).toEqual([]);
  }, 120_000);

  it('carries a call end to end through the one address, the live stream included', async () => {
    const session = await call<{ id: string }>(proxy, 'POST', '/api/sessions/', {
      room_name: 'proxy-room',
      user_id: 'proxy-user',
    });
    expect(session.status).toBe(201);
    const live = await EventStreamReader.open(`${proxy}/api/costs/live`, { 'x-user-id': 'proxy-user' });
    try {
      // The session is read from ClickHouse by the query side: it shows once the consumer stored it.
      await live.until(
        () => JSON.stringify(live.messages.at(-1)?.data ?? {}).includes(session.body.id),
        20_000,
        'the session in the live stream',
      );
      const usage = await call(proxy, 'POST', '/api/usage/events', {
        session_id: session.body.id,
        user_id: 'proxy-user',
        provider: 'deepgram',
        event_type: 'stt_minutes',
        quantity: 2,
      });
      expect(usage.status).toBe(201);
      await live.until(
        () => (live.messages.at(-1)?.data as { total_cost?: string }).total_cost === '0.0154',
        20_000,
        'the usage in the live stream',
      );
      const summary = await eventually(async () => {
        const answer = await call<{ total_cost: string }>(proxy, 'GET', '/api/costs/summary', undefined, {
          'x-user-id': 'proxy-user',
        });
        if (answer.body.total_cost !== '0.0154') throw new Error(`summary ${answer.text}`);
        return answer.body;
      });
      expect(summary.total_cost).toBe('0.0154');
    } finally {
      live.close();
    }
  });
});
