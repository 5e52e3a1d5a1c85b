import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { isolate } from '../support/harness.ts';

/** Sends raw bytes over one connection and returns the raw answer (status line and all). */
function rawRequest(port: number, bytes: Buffer | string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => socket.end(bytes));
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.once('close', () => resolve(answer));
    socket.once('error', reject);
  });
}

describe('hostile input against the embedded process', () => {
  let app: CallmeterProcess;
  let port: number;
  let session: string;
  const post = (path: string, body: string | Buffer) =>
    fetch(`${app.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: typeof body === 'string' ? body : new Uint8Array(body),
    });
  const healthy = async () => expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  const usage = (quantity: string) =>
    `{"session_id":"${session}","user_id":"tenant-h","provider":"resemble","event_type":"tts_characters","quantity":${quantity}}`;

  beforeAll(async () => {
    app = await startCallmeter({ DATA_DIR: isolate('hostile').dataDir, LOG_LEVEL: 'warn' });
    port = Number(new URL(app.url).port);
    session = (
      await call<{ id: string }>(app.url, 'POST', '/api/sessions/', { room_name: 'hostile', user_id: 'tenant-h' })
    ).body.id;
  });

  afterAll(async () => {
    await app?.stop();
  });

  it('refuses bodies over the limit with 413: 1 MiB, and 5 MiB on the batch route', async () => {
    const big = (bytes: number) => `{"room_name":"${'x'.repeat(bytes)}","user_id":"u"}`;
    expect((await post('/api/sessions/', big(1024 * 1024))).status).toBe(413);
    expect((await post('/api/usage/events/batch', `[${'0,'.repeat(3 * 1024 * 1024)}0]`)).status).toBe(413);
    expect((await post('/api/usage/events/batch', `["${'x'.repeat(2 * 1024 * 1024)}"]`)).status).toBe(200);
    await healthy();
  });

  it('answers deep nesting and invalid UTF-8 with a 400, never a crash', async () => {
    const deep = await post('/api/sessions/', '['.repeat(100_000));
    expect(deep.status).toBe(400);
    const bytes = await post('/api/sessions/', Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]));
    expect([bytes.status, await bytes.text()]).toEqual([400, '{"detail":"There was an error parsing the body"}']);
    await healthy();
  });

  it('refuses huge and non-finite numbers with a 422, without expanding them', async () => {
    for (const quantity of ['1e400', '1' + '0'.repeat(4000), '"1e1000000000"', 'NaN', 'Infinity', '-Infinity']) {
      const answer = await post('/api/usage/events', usage(quantity));
      expect([quantity.slice(0, 20), answer.status]).toEqual([quantity.slice(0, 20), 422]);
    }
    // A tiny quantity is stored at the 18 decimals of the money columns: zero, at once.
    const tiny = await post('/api/usage/events', usage('"1e-1000000000"'));
    expect([tiny.status, ((await tiny.json()) as { quantity: string }).quantity]).toEqual([201, '0']);
    // Python's int() refuses literals over 4,300 digits, so the old service could not read the body.
    const tooLong = await post('/api/usage/events', usage('1' + '0'.repeat(5000)));
    expect([tooLong.status, await tooLong.text()]).toEqual([400, '{"detail":"There was an error parsing the body"}']);
    const batch = await post('/api/usage/events/batch', `[${usage('"1e1000000000"')},${usage('7')}]`);
    expect((await batch.json()) as { status: string }[]).toMatchObject([
      { status: 'rejected' },
      { status: 'accepted' },
    ]);
    await healthy();
  });

  it('keeps SQL-looking user ids as plain values', async () => {
    const own = (
      await call<{ id: string }>(app.url, 'POST', '/api/sessions/', { room_name: 'sql', user_id: 'tenant-sql' })
    ).body.id;
    expect(
      (
        await post(
          '/api/usage/events',
          `{"session_id":"${own}","user_id":"tenant-sql","provider":"resemble","event_type":"tts_characters","quantity":2}`,
        )
      ).status,
    ).toBe(201);
    for (const user of ["' OR 1=1 --", "tenant-sql'; DROP TABLE usage_events; --", 'tenant-sql\\', '{user:String}']) {
      const summary = await call<{ total_cost: string; event_count: number }>(
        app.url,
        'GET',
        '/api/costs/summary',
        undefined,
        { 'x-user-id': user },
      );
      expect([user, summary.status, summary.body.total_cost, summary.body.event_count]).toEqual([user, 200, '0', 0]);
    }
    const summary = await call<{ event_count: number; total_cost: string }>(
      app.url,
      'GET',
      '/api/costs/summary',
      undefined,
      { 'x-user-id': 'tenant-sql' },
    );
    expect(summary.body).toMatchObject({ event_count: 1, total_cost: '0.00008' });
  });

  it('refuses header injection at the HTTP parser with a 400', async () => {
    const answer = await rawRequest(
      port,
      'GET /api/costs/summary HTTP/1.1\r\nHost: x\r\nx-user-id: a\rX-Injected: 1\r\n\r\n',
    );
    expect(answer.startsWith('HTTP/1.1 400')).toBe(true);
    await healthy();
  });

  it('keeps answering while 1,000 connections are held open with half-sent requests', async () => {
    const sockets = await Promise.all(
      Array.from(
        { length: 1000 },
        () =>
          new Promise<net.Socket>((resolve, reject) => {
            const socket = net.connect(port, '127.0.0.1', () => {
              socket.write(
                'POST /api/usage/events HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"sess',
              );
              resolve(socket);
            });
            socket.on('error', () => undefined);
            socket.once('error', reject);
          }),
      ),
    );
    try {
      const summary = await call(app.url, 'GET', '/api/costs/summary', undefined, { 'x-user-id': 'tenant-h' });
      expect(summary.status).toBe(200);
      await healthy();
    } finally {
      for (const socket of sockets) socket.destroy();
    }
    await healthy();
  });
});
