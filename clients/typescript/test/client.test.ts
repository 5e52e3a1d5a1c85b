import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Callmeter, QueueFullError, type Rejected } from '../src/client.ts';
import { PROVIDER_IDS, providerId } from '../src/providers.ts';
import { EVENT_NAMESPACE, eventIdFor, exact, shiftDecimal, usageBody } from '../src/records.ts';
import { BatchServer, usage } from './batch-server.ts';

const quiet = { warn: () => undefined, error: () => undefined };
let server: BatchServer;
let url: string;
const clients: Callmeter[] = [];
const client = (options: Partial<ConstructorParameters<typeof Callmeter>[0]> = {}) => {
  const made = new Callmeter({ baseUrl: url, flushIntervalMs: 60_000, logger: quiet, backoffBaseMs: 10, ...options });
  clients.push(made);
  return made;
};

beforeEach(async () => {
  server = new BatchServer();
  url = await server.start();
});
afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.close(1000)));
  await server.stop();
});

describe('usage bodies', () => {
  it('derive event ids as the Python client does (uuid5 of the user and key), random without a key', () => {
    // Printed by Python: uuid.uuid5(uuid.uuid5(uuid.NAMESPACE_URL, "https://callmeter.dev/usage-event"), "user-1:k")
    expect(EVENT_NAMESPACE).toBe('a582ad30-d2bb-56bf-9382-6fb67fdcff9c');
    expect(eventIdFor('user-1', 'k')).toBe('044806ae-0c56-57c8-a388-658af18cdeeb');
    expect(eventIdFor('user-1', undefined)).not.toBe(eventIdFor('user-1', undefined));
  });

  it('carry quantities exactly, never as float arithmetic', () => {
    expect(exact(0.1, 'q')).toBe('0.1');
    expect(exact(1e-7, 'q')).toBe('0.0000001');
    expect(exact('2.000', 'q')).toBe(2);
    expect(exact(12345678901234567890n, 'q')).toBe('12345678901234567890');
    expect(shiftDecimal('1750', -3)).toBe('1.75');
    expect(shiftDecimal('1500', 0)).toBe('1500');
    expect(shiftDecimal('5', -4)).toBe('0.0005');
    for (const bad of [Number.NaN, Infinity, -1, '1e3', 'abc']) expect(() => exact(bad, 'q')).toThrow(TypeError);
    expect(() => usageBody({ ...usage(0), quantities: {} })).toThrow(/needs a quantity/);
    expect(usageBody({ ...usage(0), key: 'k', timestamp: 1_800_000_000_500 })).toEqual({
      session_id: 'session-1',
      user_id: 'user-1',
      provider: 'deepgram',
      event_type: 'stt_minutes',
      event_id: eventIdFor('user-1', 'k'),
      timestamp: '2027-01-15T08:00:00.500Z',
      quantity: 1,
    });
  });

  it('map provider names by the same table as the Python client', () => {
    const python = spawnSync(
      path.resolve(import.meta.dirname, '../../../.local/clients-python/bin/python'),
      ['-c', 'import json; from callmeter.providers import PROVIDER_IDS; print(json.dumps(PROVIDER_IDS))'],
      { encoding: 'utf8' },
    );
    expect(python.status, python.stderr).toBe(0);
    expect(PROVIDER_IDS).toEqual(JSON.parse(python.stdout));
    expect(providerId('Azure OpenAI')).toBe('azure');
    expect(providerId('Some New Vendor')).toBe('some-new-vendor');
    expect(providerId(undefined)).toBe('unknown');
  });
});

describe('the client against a real HTTP server', () => {
  it('sends full batches as they fill and the rest on flush', async () => {
    const meter = client({ batchSize: 100 });
    const ids = Array.from({ length: 250 }, (_, i) => meter.record(usage(i)));
    await meter.flush();
    expect(server.batches.map((b) => b.length)).toEqual([100, 100, 50]);
    expect(new Set(server.stored.keys())).toEqual(new Set(ids));
    expect(meter.pendingCount).toBe(0);
  });

  it('waits Retry-After on 503 and 429 and resends the same ids', async () => {
    server.script.push({ status: 503, headers: { 'retry-after': '1' }, body: {} }, { status: 429, body: {} });
    const meter = client({ batchSize: 10 });
    for (let i = 0; i < 10; i += 1) meter.record({ ...usage(i), key: `k${i}` });
    const started = Date.now();
    await meter.flush();
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(server.batches).toHaveLength(3);
    expect(server.batches[2]!.map((b) => b.event_id)).toEqual(server.batches[0]!.map((b) => b.event_id));
    expect(server.stored.size).toBe(10);
  });

  it('resends a batch stored but not answered in time under the same ids, counted once', async () => {
    server.script.push('hang');
    const meter = client({ timeoutMs: 300 });
    const ids = Array.from({ length: 5 }, (_, i) => meter.record(usage(i)));
    await meter.flush();
    expect(server.batches.length).toBeGreaterThanOrEqual(2);
    for (const batch of server.batches) expect(batch.map((b) => b.event_id)).toEqual(ids);
    expect(server.stored.size).toBe(5);
  });

  it('reports rejected items once and never resends them; a batch refused whole is every item rejected', async () => {
    server.reject = (body) => body.quantity === 2;
    const reported: Rejected[] = [];
    const meter = client({ onRejected: (r) => reported.push(r) });
    for (let i = 0; i < 3; i += 1) meter.record(usage(i));
    await meter.flush();
    expect(reported.map((r) => r.body.quantity)).toEqual([2]);
    server.script.push({ status: 401, body: { detail: 'Not authenticated' } });
    meter.record(usage(9));
    await meter.flush();
    expect(reported.at(-1)!.errors).toEqual({ status: 401, detail: 'Not authenticated' });
    expect(server.batches).toHaveLength(2);
    expect([meter.rejectedCount, meter.pendingCount]).toEqual([2, 0]);
  });

  it('bounds memory: past maxQueue record() throws, and close() says what was left', async () => {
    const meter = new Callmeter({ baseUrl: 'http://127.0.0.1:9', maxQueue: 3, timeoutMs: 200, logger: quiet });
    for (let i = 0; i < 3; i += 1) meter.record(usage(i));
    expect(() => meter.record(usage(3))).toThrow(QueueFullError);
    expect(await meter.close(300)).toBe(false);
  });

  it('opens a session with retries and sends its usage', async () => {
    const meter = client();
    const session = await meter.startSession({ roomName: 'room', userId: 'user-1' });
    expect(session.id).toBe('session-1');
    meter.record(usage(0));
    expect(await meter.close()).toBe(true);
    expect(server.stored.size).toBe(1);
  });
});
