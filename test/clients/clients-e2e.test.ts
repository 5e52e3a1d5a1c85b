import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import {
  FlakyCallmeter,
  pricedTotal,
  readLedger,
  ROOT,
  runWorker,
  summaryOf,
  type WorkerRun,
} from '../support/client-e2e.ts';
import { clientPackages, userScript } from '../support/client-packages.ts';
import { isolate } from '../support/harness.ts';

// Each client, end to end against the embedded process (`npm start`): 10,000 metrics of the real
// framework classes through the forwarder, while the server is restarted twice (once gracefully,
// once killed) and one stored batch's answer never reaches the client. Every metric must be counted
// exactly once, and the tenant's summary must equal the metrics priced by the rate card and catalogs.
// The clients are the installed packages (test/support/client-packages-setup.ts).
const METRICS = 10_000;
// The client's timeout: the withheld answer costs one of them, and a batch of 100 is answered in tens of
// milliseconds. A slower answer is only sent again under the same ids, which the server counts once.
const TIMEOUT_MS = 1_500;
const PYTHON = clientPackages().python;
const PYTHON_WORKER = path.join(ROOT, 'clients/python/tests/e2e_worker.py');

let server: FlakyCallmeter | null = null;
afterEach(async () => {
  await server?.stop();
  server = null;
});

async function flakyServer(label: string): Promise<FlakyCallmeter> {
  const isolation = isolate(label);
  server = new FlakyCallmeter({ DATA_DIR: isolation.dataDir, LOG_LEVEL: 'warn' });
  await server.start();
  return server;
}

/** Withholds the answer to the 3rd batch, restarts gracefully after the 6th and kills after the 10th. */
function scheduleFaults(flaky: FlakyCallmeter): void {
  flaky.afterBatch(3, () => flaky.withholdNextAnswer());
  flaky.afterBatch(6, () => void flaky.restart('SIGTERM'));
  flaky.afterBatch(10, () => void flaky.restart('SIGKILL'));
}

function ledgerFile(label: string): string {
  return path.join(mkdtempSync(path.join(os.tmpdir(), `callmeter-${label}-`)), 'ledger.jsonl');
}

function finished(run: WorkerRun): { recorded: number; rejected: number } {
  if (run.code !== 0) throw new Error(`worker exited ${run.code}\n${run.stdout}\n${run.stderr}`);
  const last = run.lines.at(-1) as { recorded: number; rejected: number } | undefined;
  if (last?.recorded === undefined) throw new Error(`no final line\n${run.stdout}`);
  return last;
}

async function expectCountedOnce(flaky: FlakyCallmeter, userId: string, ledger: string, recorded: number) {
  const lines = readLedger(ledger);
  expect(lines).toHaveLength(recorded);
  const summary = await summaryOf(flaky.directUrl, userId, recorded);
  expect(summary.event_count).toBe(recorded);
  expect(summary.unpriced_event_count).toBe(0);
  const expected = await pricedTotal(flaky.directUrl, lines);
  expect(new Exact(summary.total_cost).toFixed()).toBe(expected);
  expect(new Exact(expected).gt(0)).toBe(true);
}

describe('the Python client, end to end', () => {
  it('counts 10,000 LiveKit metrics exactly once through two restarts and a withheld answer', async () => {
    const flaky = await flakyServer('py-livekit-e2e');
    scheduleFaults(flaky);
    const ledger = ledgerFile('py-livekit');
    const userId = 'user-py-livekit';
    const args = [
      PYTHON_WORKER,
      ...['--base-url', flaky.url, '--user-id', userId, '--room', 'room-py-livekit', '--framework', 'livekit'],
      ...['--count', String(METRICS), '--ledger', ledger, '--timeout', String(TIMEOUT_MS / 1000)],
    ];
    const result = finished(await runWorker(PYTHON, args, 240_000));
    expect(result.rejected).toBe(0);
    expect(flaky.withheld).toBe(1);
    expect(flaky.restarts).toBe(2);
    await expectCountedOnce(flaky, userId, ledger, result.recorded);
  });

  it('sends what a killed Pipecat worker had spooled at its next start, once', async () => {
    // The first run records 6,000 metrics while no batch gets through, and is killed: all of them
    // are only in its spool. The second run records nothing new; its spool must deliver them, once,
    // through the same restarts and withheld answer.
    const flaky = await flakyServer('py-pipecat-e2e');
    const spooled = ledgerFile('py-pipecat');
    const spool = mkdtempSync(path.join(os.tmpdir(), 'callmeter-spool-'));
    const userId = 'user-py-pipecat';
    const worker = (count: number, ledger: string) => [
      PYTHON_WORKER,
      ...['--base-url', flaky.url, '--user-id', userId, '--room', 'room-py-pipecat', '--framework', 'pipecat'],
      ...['--count', String(count), '--ledger', ledger, '--timeout', String(TIMEOUT_MS / 1000), '--spool-dir', spool],
    ];
    flaky.refuseBatches = true;
    const crashed = await runWorker(PYTHON, [...worker(METRICS, spooled), '--crash-after', '6000'], 240_000);
    expect(crashed.code, `${crashed.stdout}\n${crashed.stderr}`).toBe(3);
    expect(flaky.answeredBatches).toBe(0);
    flaky.refuseBatches = false;
    scheduleFaults(flaky);
    const resumed = finished(await runWorker(PYTHON, worker(0, ledgerFile('py-pipecat-resumed')), 240_000));
    expect(resumed).toEqual({ recorded: 0, rejected: 0 });
    expect(flaky.withheld).toBe(1);
    expect(flaky.restarts).toBe(2);
    await expectCountedOnce(flaky, userId, spooled, readLedger(spooled).length);
  });
});

describe('the TypeScript client, end to end', () => {
  it('counts 10,000 LiveKit metrics exactly once through two restarts and a withheld answer', async () => {
    const flaky = await flakyServer('ts-livekit-e2e');
    scheduleFaults(flaky);
    const ledger = ledgerFile('ts-livekit');
    const userId = 'user-ts-livekit';
    const worker = userScript('test/e2e-worker.ts');
    const args = [
      ...worker.args,
      ...['--base-url', flaky.url, '--user-id', userId, '--room', 'room-ts-livekit'],
      ...['--count', String(METRICS), '--ledger', ledger, '--timeout-ms', String(TIMEOUT_MS)],
    ];
    const result = finished(await runWorker(worker.command, args, 240_000, worker.cwd));
    expect(result.rejected).toBe(0);
    expect(flaky.withheld).toBe(1);
    expect(flaky.restarts).toBe(2);
    await expectCountedOnce(flaky, userId, ledger, result.recorded);
  });
});
