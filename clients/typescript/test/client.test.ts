import { execFile, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  Callmeter,
  DEAD_LETTER_FILE,
  EVENT_NAMESPACE,
  eventIdFor,
  PROVIDER_IDS,
  providerId,
  QueueFullError,
  usageBody,
  type AuthError,
  type Quantity,
  type Rejected,
} from '@callmeter/client';
import { clientPackages } from '../../../test/support/client-packages.ts';
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

const tempDir = () => mkdtempSync(path.join(os.tmpdir(), 'callmeter-ts-spool-'));
const readLines = (file: string) =>
  readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);

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
    const quantity = (value: Quantity) => usageBody({ ...usage(0), quantities: { quantity: value } }).quantity;
    expect(quantity(0.1)).toBe('0.1');
    expect(quantity(1e-7)).toBe('0.0000001');
    expect(quantity(1.5e21)).toBe('1500000000000000000000');
    expect(quantity('2.000')).toBe(2);
    expect(quantity(12345678901234567890n)).toBe('12345678901234567890');
    expect(usageBody({ ...usage(0), quantities: {}, usageData: { audio_duration_seconds: 5e-7 } }).usage_data).toEqual({
      audio_duration_seconds: '0.0000005',
    });
    for (const bad of [Number.NaN, Infinity, -1, '1e3', 'abc']) expect(() => quantity(bad)).toThrow(TypeError);
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
      clientPackages().python,
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

  it('moves refused items to the dead-letter file beside the spool, reported once, never resent', async () => {
    server.reject = (body) => body.quantity === 2;
    const reported: Rejected[] = [];
    const spoolDir = tempDir();
    const meter = client({ spoolDir, onRejected: (r) => reported.push(r) });
    const ids = [0, 1, 2].map((i) => meter.record(usage(i)));
    await meter.flush();
    expect(reported.map((r) => [r.body.quantity, r.status, r.errors])).toEqual([[2, null, [{ msg: 'no' }]]]);
    expect(meter.stats()).toMatchObject({ pending: 0, sent: 2, rejected: 1 });
    expect(server.batches).toHaveLength(1);
    const letters = readLines(path.join(spoolDir, DEAD_LETTER_FILE));
    expect(letters.map((l) => [l.event_id, (l.body as { quantity: number }).quantity])).toEqual([[ids[1], 2]]);
    expect(await meter.deadLetterCount()).toBe(1);
    expect([...server.stored.keys()].sort()).toEqual([ids[0], ids[2]].sort());
  });

  it('keeps every spooled event while the key is refused and sends them once it is fixed', async () => {
    server.refusedKeys.add('cm_live_mistyped');
    const authErrors: AuthError[] = [];
    const meter = client({
      apiKey: 'cm_live_mistyped',
      batchSize: 100,
      spoolDir: tempDir(),
      authBackoffCapMs: 200,
      onAuthError: (e) => authErrors.push(e),
    });
    const ids = Array.from({ length: 250 }, (_, i) => meter.record(usage(i)));
    const flushed = meter.flush();
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(meter.pendingCount).toBe(250);
    expect(meter.rejectedCount).toBe(0);
    expect(authErrors).toHaveLength(1);
    expect(authErrors[0]).toMatchObject({ status: 401, detail: 'Invalid API key' });
    expect(authErrors[0]!.pending).toBeGreaterThanOrEqual(100);
    meter.setApiKey('cm_live_right');
    await flushed;
    expect(meter.stats()).toMatchObject({ pending: 0, sent: 250, rejected: 0 });
    expect(meter.authErrorCount).toBe(server.authorizations.filter((a) => a === 'Bearer cm_live_mistyped').length);
    expect(new Set(server.stored.keys())).toEqual(new Set(ids));
  });

  it('leaves what a refused key kept in the spool for a restarted worker, which sends it', async () => {
    server.refusedKeys.add('revoked');
    const spoolDir = tempDir();
    const first = new Callmeter({ baseUrl: url, apiKey: 'revoked', spoolDir, logger: quiet, flushIntervalMs: 60_000 });
    const ids = [0, 1, 2].map((i) => first.record(usage(i)));
    expect(await first.close(300)).toBe(false);
    const again = client({ apiKey: 'fixed', spoolDir });
    expect(again.pendingCount).toBe(3);
    expect(await again.close()).toBe(true);
    expect(new Set(server.stored.keys())).toEqual(new Set(ids));
    expect(client({ spoolDir }).pendingCount).toBe(0);
  });

  it('holds items forbidden for the credential like a refused key, and lets the others go', async () => {
    let fixed = false;
    server.itemAnswer = (body) =>
      body.user_id === 'other' && !fixed
        ? { status: 'rejected', errors: [{ type: 'forbidden', loc: ['body', 0, 'user_id'], msg: 'Forbidden' }] }
        : undefined;
    const authErrors: AuthError[] = [];
    const meter = client({ spoolDir: tempDir(), authBackoffCapMs: 50, onAuthError: (e) => authErrors.push(e) });
    const mine = meter.record(usage(0));
    const theirs = meter.record(usage(1, 'other'));
    const flushed = meter.flush();
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect([meter.pendingCount, server.stored.has(mine), server.stored.has(theirs)]).toEqual([1, true, false]);
    expect(authErrors.map((e) => e.status)).toEqual([403]);
    fixed = true;
    await flushed;
    expect(server.stored.has(theirs)).toBe(true);
    expect(meter.rejectedCount).toBe(0);
  });

  it('splits a batch refused whole for its size; only the event refused alone is dead', async () => {
    server.tooLarge = (bodies) => bodies.some((b) => b.quantity === 3);
    const spoolDir = tempDir();
    const meter = client({ spoolDir, batchSize: 8 });
    const ids = Array.from({ length: 8 }, (_, i) => meter.record(usage(i)));
    await meter.flush();
    expect(new Set(server.stored.keys())).toEqual(new Set(ids.filter((_, i) => i !== 2)));
    const letters = readLines(path.join(spoolDir, DEAD_LETTER_FILE));
    expect(letters.map((l) => [l.event_id, l.status])).toEqual([[ids[2], 413]]);
  });

  it('holds a batch answered 404 as a whole (a wrong URL), never dead', async () => {
    server.script.push({ status: 404, body: { detail: 'Not Found' } });
    const meter = client({ spoolDir: tempDir(), authBackoffCapMs: 50 });
    const ids = Array.from({ length: 5 }, (_, i) => meter.record(usage(i)));
    await meter.flush();
    expect(new Set(server.stored.keys())).toEqual(new Set(ids));
    expect([meter.rejectedCount, meter.retryCount]).toEqual([0, 1]);
  });

  it('writes dead letters the Python command lists and resends (one format for both clients)', async () => {
    server.reject = (body) => body.quantity === 2;
    const spoolDir = tempDir();
    const meter = client({ spoolDir });
    const ids = [0, 1, 2].map((i) => meter.record(usage(i)));
    await meter.flush();
    // Run without blocking this process: the batch server the command sends to answers from it.
    const python = (...args: string[]) =>
      promisify(execFile)(clientPackages().callmeterCommand, ['dead-letters', ...args, '--spool-dir', spoolDir]);
    const listed = await python('list');
    expect(listed.stdout.split(' ')[0]).toBe(ids[1]);
    server.reject = () => false;
    const resent = await python('resend', '--all', '--base-url', url);
    expect(resent.stdout).toContain('1 accepted (removed), 0 refused again (kept)');
    expect(await meter.deadLetterCount()).toBe(0);
    expect(server.stored.has(ids[1]!)).toBe(true);
  });

  it('keeps dead letters in memory without a spool', async () => {
    server.reject = (body) => body.quantity === 2;
    const meter = client();
    const ids = [0, 1, 2].map((i) => meter.record(usage(i)));
    await meter.flush();
    expect((await meter.deadLetters()).map((l) => l.event_id)).toEqual([ids[1]]);
  });

  it("spools to disk before record() returns: a killed worker's events go out at its next start", async () => {
    const spoolDir = tempDir();
    const script = `
      import { Callmeter } from '@callmeter/client';
      const meter = new Callmeter({ baseUrl: 'http://127.0.0.1:9', spoolDir: ${JSON.stringify(spoolDir)}, flushIntervalMs: 60000, timeoutMs: 200, logger: { warn() {}, error() {} } });
      for (let i = 0; i < 40; i += 1)
        meter.record({ sessionId: 's', userId: 'u', provider: 'deepgram', eventType: 'stt_minutes', key: 'k' + i, quantities: { quantity: 1 } });
      process.exit(3);
    `;
    // Plain node in the npm project, as a user's worker runs: the package is its installed build.
    const killed = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      cwd: clientPackages().npmProject,
    });
    expect(killed.status, killed.stderr).toBe(3);
    const meter = client({ spoolDir });
    expect(meter.pendingCount).toBe(40);
    await meter.flush();
    expect(new Set(server.stored.keys())).toEqual(
      new Set(Array.from({ length: 40 }, (_, i) => eventIdFor('u', `k${i}`))),
    );
    expect(await meter.close()).toBe(true);
    expect(client({ spoolDir }).pendingCount).toBe(0);
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
