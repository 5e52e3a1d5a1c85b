import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { eventually } from '../support/harness.ts';
import { CorrectionDriver } from './correction-driver.ts';
import { createDriverSessions, inPhase, LoadDriver } from './load-driver.ts';
import { expectStoredExactlyOnce } from './stored-exactly-once.ts';

const USER = 'journal-tenant';
const SESSIONS = 24;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The embedded `npm start` answers a 201 once the record is synced to its journal, and stores it
 * behind: the same load driver as the fault suite (known costs, retries with the same ids, resends)
 * against one embedded process that is killed with SIGKILL while it stores (its engine's views then
 * rebuilt, the round in flight replayed), stopped with SIGTERM, and whose ClickHouse refuses inserts
 * for a while; meanwhile a second driver voids and amends acknowledged events. Every acknowledged event,
 * and every correction's rows, must be stored exactly once, in every table and view.
 */
describe('the embedded journal under faults', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'callmeter-journal-'));
  const env = { DATA_DIR: folder, FAULT_INJECTION: '1', LOG_LEVEL: 'warn', SHUTDOWN_TIMEOUT_MS: '5000' };
  let process_: CallmeterProcess;
  /** What each process wrote, the current one's read at the end. */
  const outputs: string[] = [];
  const restart = async (signal: 'SIGKILL' | 'SIGTERM') => {
    await process_.stop(signal);
    outputs.push(process_.output());
    process_ = await startCallmeter(env, 120_000);
  };

  afterAll(async () => {
    await process_?.stop('SIGKILL');
  });

  it('stores every acknowledged event and correction exactly once through kills, a clean restart and refused inserts', async () => {
    process_ = await startCallmeter(env, 120_000);
    const sessions = await createDriverSessions(process_.url, USER, SESSIONS);
    const driver = new LoadDriver(() => process_.url, sessions);
    const corrections = new CorrectionDriver(() => process_.url, driver, USER);
    driver.start();
    corrections.start();
    const phase = (name: string, fault: () => Promise<unknown>) => inPhase(driver, name, fault);
    await phase('none', () => sleep(2_000));
    await phase('kill -9 (3 times)', async () => {
      for (let kill = 0; kill < 3; kill += 1) {
        await sleep(1_500);
        await restart('SIGKILL');
      }
    });
    await phase('SIGTERM and restart', () => restart('SIGTERM'));
    let acknowledgedBefore = 0;
    await phase('ClickHouse inserts fail for 8 s', async () => {
      const fault = await call(process_.url, 'POST', '/_faults/clickhouse-inserts?seconds=8');
      expect(fault.status).toBe(200);
      acknowledgedBefore = [...driver.events.values()].filter((event) => event.acknowledged).length;
      await sleep(6_000);
      // The journal keeps taking usage while nothing can be stored: the workers are not held up.
      expect([...driver.events.values()].filter((event) => event.acknowledged).length).toBeGreaterThan(
        acknowledgedBefore + 100,
      );
      await sleep(2_000);
    });
    await Promise.all([driver.stop(), corrections.stop()]);
    process.stdout.write(
      `corrections made: ${corrections.made.size}, retried: ${JSON.stringify(Object.fromEntries(corrections.retries))}\n`,
    );
    expect(corrections.made.size).toBeGreaterThan(5);
    // Whatever is still in the journal is stored by the next start too.
    await restart('SIGKILL');
    await eventually(async () => expect(process_.output()).toContain('clickhouse_views_rebuilt'), 30_000);
    // A kill under this load finds a round being stored: at least one start replayed the one it found.
    const replays = [...outputs, process_.output()].join('').split('"msg":"journal_round_replayed"').length - 1;
    process.stdout.write(`rounds replayed at a start: ${replays}\n`);
    expect(replays).toBeGreaterThan(0);

    await expectStoredExactlyOnce({
      url: process_.url,
      user: USER,
      sessions,
      driver,
      totals: async () => (await call(process_.url, 'GET', '/_faults/stored-totals')).body,
      corrections,
    });
  }, 600_000);
});
