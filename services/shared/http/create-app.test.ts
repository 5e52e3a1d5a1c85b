import type { AddressInfo } from 'node:net';
import Router from '@koa/router';
import { afterEach, describe, expect, it } from 'vitest';
import { AppError } from '../errors.ts';
import { createLogger } from '../logger.ts';
import { createHttpApp } from './create-app.ts';

const servers: { close: () => void }[] = [];
afterEach(() => servers.splice(0).forEach((server) => server.close()));

async function serve(router: Router): Promise<string> {
  const app = createHttpApp({ service: 'test', log: createLogger('silent'), routers: [router], checks: [] });
  const server = app.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('the HTTP app', () => {
  it('answers an unexpected error with a generic 500 that names the request id and leaks nothing', async () => {
    const router = new Router().get('/boom', () => {
      throw new Error('password=hunter2 at db.internal');
    });
    const url = await serve(router);
    const response = await fetch(`${url}/boom`, { headers: { 'x-request-id': 'req-123' } });
    expect(response.status).toBe(500);
    expect(response.headers.get('x-request-id')).toBe('req-123');
    expect(await response.text()).toBe('{"detail":"Internal Server Error","request_id":"req-123"}');
  });

  it('maps AppError codes to their status with the detail body and headers', async () => {
    const router = new Router()
      .get('/conflict', () => {
        throw AppError.of('CONFLICT', 'Cannot move session from COMPLETED to ACTIVE');
      })
      .get('/busy', () => {
        throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Kafka is unavailable', { headers: { 'Retry-After': '1' } });
      });
    const url = await serve(router);
    const conflict = await fetch(`${url}/conflict`);
    expect([conflict.status, await conflict.text()]).toEqual([409, '{"detail":"Cannot move session from COMPLETED to ACTIVE"}']);
    const busy = await fetch(`${url}/busy`);
    expect([busy.status, busy.headers.get('retry-after'), busy.headers.get('content-type')]).toEqual([503, '1', 'application/json']);
  });

  it('replaces an unsafe incoming request id with a fresh one', async () => {
    const url = await serve(new Router());
    const response = await fetch(`${url}/healthz`, { headers: { 'x-request-id': 'bad id\twith spaces' } });
    expect(response.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
  });
});
