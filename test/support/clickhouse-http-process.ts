import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../infra/local/free-port.ts';
import { eventually } from './eventually.ts';

const SERVER = path.resolve(import.meta.dirname, 'clickhouse-http/server.ts');

export interface ClickHouseHttpProcess {
  /** What CLICKHOUSE_URL is set to for callmeter processes. */
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts the test endpoint (test/support/clickhouse-http/server.ts: test equipment, not a way to run
 * callmeter) on a free port over the embedded engine's data in `folder`, and waits until it answers /ping.
 */
export async function startClickHouseHttp(folder: string, timeoutMs = 60_000): Promise<ClickHouseHttpProcess> {
  mkdirSync(folder, { recursive: true });
  const port = await freePort();
  const child = spawn(process.execPath, ['--import', 'tsx', SERVER, folder, String(port)], {
    cwd: path.resolve(import.meta.dirname, '../..'),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  try {
    await eventually(async () => {
      if (child.exitCode !== null)
        throw new Error(`the ClickHouse test endpoint exited with ${child.exitCode}: ${output}`);
      const response = await fetch(`${url}/ping`);
      if (response.status !== 200) throw new Error(`/ping answered ${response.status}`);
    }, timeoutMs);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    child,
    output: () => output,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      const killed = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(killed);
    },
  };
}
