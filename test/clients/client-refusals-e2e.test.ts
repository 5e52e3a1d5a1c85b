import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterEach, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { ROOT } from '../support/client-e2e.ts';
import { clientPackages, userScript } from '../support/client-packages.ts';
import { eventually, isolate } from '../support/harness.ts';

// The Python client against the embedded process (`npm start`, AUTH_MODE=on) when the server refuses:
// a mistyped and then a revoked key keep the whole spool until the right key sends it; usage refused
// for what it holds (a 409 for an ended session, an unknown session) lands in the dead letters,
// `callmeter dead-letters` lists it, and re-sends it once the server takes it. Nothing is counted twice.
// The clients and the command are the installed packages (test/support/client-packages-setup.ts).
const ADMIN_KEY = 'refusals-e2e-admin-key-0123456789abcdefghij';
const USER = 'tenant-refusals';
const run = promisify(execFile);

interface WorkerResult {
  readonly flushed: boolean;
  readonly stats: { pending: number; sent: number; rejected: number; auth_errors: number; dead_letters: number };
  readonly auth_errors: number[];
  readonly rejected: string[];
}

let server: CallmeterProcess | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

const admin = { authorization: `Bearer ${ADMIN_KEY}` };

async function worker(args: Record<string, string | number>): Promise<WorkerResult> {
  const flags = Object.entries(args).flatMap(([name, value]) => [`--${name}`, String(value)]);
  const script = path.join(ROOT, 'clients/python/tests/e2e_spool_worker.py');
  const { stdout } = await run(clientPackages().python, [script, ...flags], { timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as WorkerResult;
}

/** `callmeter dead-letters …`; resolves with the exit status and output (a non-zero status is an answer too). */
async function deadLetters(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(clientPackages().callmeterCommand, ['dead-letters', ...args], {
      timeout: 120_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error) {
    const failed = error as { code: number; stdout: string; stderr: string };
    return { code: failed.code, stdout: failed.stdout, stderr: failed.stderr };
  }
}

async function eventCount(url: string, atLeast: number): Promise<number> {
  return eventually(async () => {
    const answer = await call<{ event_count: number }>(url, 'GET', '/api/costs/summary', undefined, {
      ...admin,
      'x-user-id': USER,
    });
    if (answer.status !== 200) throw new Error(`summary ${answer.status} ${answer.text}`);
    if (answer.body.event_count < atLeast) throw new Error(`${answer.body.event_count} of ${atLeast} events`);
    return answer.body.event_count;
  }, 30_000);
}

async function session(url: string, room: string): Promise<string> {
  const created = await call<{ id: string }>(url, 'POST', '/api/sessions/', { room_name: room, user_id: USER }, admin);
  expect(created.status, created.text).toBeLessThan(300);
  return created.body.id;
}

describe('the Python client when the server refuses', () => {
  it('keeps all 250 spooled events through a mistyped and a revoked key and sends them, once, with the right one', async () => {
    const isolation = isolate('client-refused-key');
    server = await startCallmeter({
      DATA_DIR: isolation.dataDir,
      LOG_LEVEL: 'warn',
      AUTH_MODE: 'on',
      ADMIN_API_KEY: ADMIN_KEY,
    });
    const url = server.url;
    const sessionId = await session(url, 'room-refused-key');
    const spool = mkdtempSync(path.join(os.tmpdir(), 'callmeter-refused-key-'));
    const common = { 'base-url': url, 'spool-dir': spool, 'session-id': sessionId, 'user-id': USER };

    const mistyped = await worker({ ...common, 'api-key': `cm_live_${'x'.repeat(43)}`, count: 250, wait: 3 });
    expect(mistyped.flushed).toBe(false);
    expect(mistyped.stats).toMatchObject({ pending: 250, sent: 0, rejected: 0, dead_letters: 0 });
    expect(mistyped.auth_errors).toEqual([401]);

    const created = await call<{ id: string; key: string }>(url, 'POST', '/api/admin/keys', { scope: 'ingest' }, admin);
    expect(created.status, created.text).toBe(201);
    const revoked = await call(url, 'DELETE', `/api/admin/keys/${created.body.id}`, undefined, admin);
    expect(revoked.status, revoked.text).toBe(200);
    const withRevoked = await worker({ ...common, 'api-key': created.body.key, wait: 3 });
    expect(withRevoked.stats).toMatchObject({ pending: 250, sent: 0, rejected: 0 });
    expect(withRevoked.auth_errors).toEqual([401]);
    expect(existsSync(path.join(spool, 'callmeter-dead-letters.jsonl'))).toBe(false);

    const right = await call<{ key: string }>(url, 'POST', '/api/admin/keys', { scope: 'ingest' }, admin);
    const fixed = await worker({ ...common, 'api-key': right.body.key, wait: 60 });
    expect(fixed.flushed).toBe(true);
    expect(fixed.stats).toMatchObject({ pending: 0, sent: 250, rejected: 0 });
    // The same 250 recorded again (the same keys, so the same ids): duplicates, counted once.
    const again = await worker({ ...common, 'api-key': right.body.key, count: 250, wait: 60 });
    expect(again.stats).toMatchObject({ pending: 0, sent: 250, rejected: 0 });
    expect(await eventCount(url, 250)).toBe(250);
  });

  it('moves refused usage to the dead letters, which the command lists and re-sends once the server takes it', async () => {
    const isolation = isolate('client-dead-letters');
    const env = { DATA_DIR: isolation.dataDir, LOG_LEVEL: 'warn', AUTH_MODE: 'on', ADMIN_API_KEY: ADMIN_KEY };
    server = await startCallmeter(env);
    const sessionId = await session(server.url, 'room-dead-letters');
    // The call ended two hours ago: usage timed now is past its end and the default hour of grace (a 409).
    const ended = await call(
      server.url,
      'PATCH',
      `/api/sessions/${sessionId}`,
      { status: 'COMPLETED', ended_at: new Date(Date.now() - 2 * 3_600_000).toISOString() },
      admin,
    );
    expect(ended.status, ended.text).toBe(200);
    const spool = mkdtempSync(path.join(os.tmpdir(), 'callmeter-dead-letters-'));
    const common = { 'base-url': server.url, 'api-key': ADMIN_KEY, 'spool-dir': spool, 'user-id': USER };
    const late = await worker({ ...common, 'session-id': sessionId, count: 3, 'key-prefix': 'late', wait: 30 });
    const unknown = await worker({
      ...common,
      'session-id': '00000000-0000-4000-8000-00000000dead',
      count: 1,
      'key-prefix': 'nowhere',
      wait: 30,
    });
    // Before the fix, 3 spooled and 0 left anywhere: now every one is a dead letter, reported once.
    expect(late.stats).toMatchObject({ pending: 0, sent: 0, rejected: 3, dead_letters: 3 });
    expect(unknown.stats).toMatchObject({ pending: 0, sent: 0, rejected: 1, dead_letters: 4 });

    const listed = await deadLetters('list', '--spool-dir', spool);
    expect(listed.code, listed.stderr).toBe(0);
    const lines = listed.stdout.trim().split('\n');
    expect(lines.map((line) => line.split(' ')[0])).toEqual([...late.rejected, ...unknown.rejected]);
    expect(lines.slice(0, 3).every((line) => line.includes('it takes no more usage'))).toBe(true);
    expect(lines[3]).toContain('Session not found');

    // The operator gives ended calls three hours of grace: the late usage is taken, the unknown session's is not.
    await server.stop();
    server = await startCallmeter({ ...env, USAGE_GRACE_AFTER_END_SECONDS: '10800' });
    const base = ['--spool-dir', spool, '--base-url', server.url, '--api-key', ADMIN_KEY];
    const resent = await deadLetters('resend', '--all', ...base);
    expect(resent.code, resent.stderr).toBe(1);
    expect(resent.stdout).toContain('3 accepted (removed), 1 refused again (kept)');
    const left = await deadLetters('list', '--json', '--spool-dir', spool);
    expect(
      left.stdout
        .trim()
        .split('\n')
        .map((line) => (JSON.parse(line) as { event_id: string }).event_id),
    ).toEqual(unknown.rejected);
    const twice = await deadLetters('resend', unknown.rejected[0]!, ...base);
    expect(twice.code).toBe(1);
    expect(await eventCount(server.url, 3)).toBe(3);
  });
});

interface TsWorkerResult {
  readonly flushed: boolean;
  readonly stats: { pending: number; sent: number; rejected: number; authErrors: number; deadLetters: number };
  readonly authErrors: number[];
  readonly rejected: string[];
}

async function tsWorker(args: Record<string, string | number>): Promise<TsWorkerResult> {
  const flags = Object.entries(args).flatMap(([name, value]) => [`--${name}`, String(value)]);
  const worker = userScript('test/e2e-spool-worker.ts');
  const { stdout } = await run(worker.command, [...worker.args, ...flags], { cwd: worker.cwd, timeout: 120_000 });
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as TsWorkerResult;
}

describe('the TypeScript client when the server refuses', () => {
  it('keeps its spool through a revoked key, sends it with the right one, and dead-letters late usage for the command', async () => {
    const isolation = isolate('ts-client-refusals');
    const env = { DATA_DIR: isolation.dataDir, LOG_LEVEL: 'warn', AUTH_MODE: 'on', ADMIN_API_KEY: ADMIN_KEY };
    server = await startCallmeter(env);
    const url = server.url;
    const sessionId = await session(url, 'room-ts-refusals');
    const spool = mkdtempSync(path.join(os.tmpdir(), 'callmeter-ts-refusals-'));
    const common = { 'base-url': url, 'spool-dir': spool, 'user-id': USER };

    const created = await call<{ id: string; key: string }>(url, 'POST', '/api/admin/keys', { scope: 'ingest' }, admin);
    expect(created.status, created.text).toBe(201);
    const revoked = await call(url, 'DELETE', `/api/admin/keys/${created.body.id}`, undefined, admin);
    expect(revoked.status, revoked.text).toBe(200);
    const held = await tsWorker({
      ...common,
      'session-id': sessionId,
      'api-key': created.body.key,
      count: 250,
      'wait-ms': 3000,
    });
    expect(held.flushed).toBe(false);
    expect(held.stats).toMatchObject({ pending: 250, sent: 0, rejected: 0, deadLetters: 0 });
    expect(held.authErrors).toEqual([401]);

    const right = await call<{ key: string }>(url, 'POST', '/api/admin/keys', { scope: 'ingest' }, admin);
    const fixed = await tsWorker({ ...common, 'session-id': sessionId, 'api-key': right.body.key, 'wait-ms': 60_000 });
    expect(fixed.flushed).toBe(true);
    expect(fixed.stats).toMatchObject({ pending: 0, sent: 250, rejected: 0 });
    expect(await eventCount(url, 250)).toBe(250);

    // Usage for a call that ended two hours ago is refused (409): a dead letter, in the file the command reads.
    const ended = await session(url, 'room-ts-ended');
    const patched = await call(
      url,
      'PATCH',
      `/api/sessions/${ended}`,
      { status: 'COMPLETED', ended_at: new Date(Date.now() - 2 * 3_600_000).toISOString() },
      admin,
    );
    expect(patched.status, patched.text).toBe(200);
    const late = await tsWorker({
      ...common,
      'session-id': ended,
      'api-key': right.body.key,
      count: 3,
      'key-prefix': 'late',
    });
    expect(late.stats).toMatchObject({ pending: 0, sent: 0, rejected: 3, deadLetters: 3 });
    const listed = await deadLetters('list', '--spool-dir', spool);
    expect(
      listed.stdout
        .trim()
        .split('\n')
        .map((line) => line.split(' ')[0]),
    ).toEqual(late.rejected);

    await server.stop();
    server = await startCallmeter({ ...env, USAGE_GRACE_AFTER_END_SECONDS: '10800' });
    const resent = await deadLetters(
      'resend',
      '--all',
      '--spool-dir',
      spool,
      '--base-url',
      server.url,
      '--api-key',
      right.body.key,
    );
    expect(resent.code, resent.stderr).toBe(0);
    expect(resent.stdout).toContain('3 accepted (removed), 0 refused again (kept)');
    expect((await deadLetters('list', '--json', '--spool-dir', spool)).stdout).toBe('');
    expect(await eventCount(server.url, 253)).toBe(253);
  });
});
