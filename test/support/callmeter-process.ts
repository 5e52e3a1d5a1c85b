import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '../../infra/local/free-port.ts';
import { callmeterEnv, callmeterNodeArgs } from '../../infra/local/process.ts';
import { eventually } from './harness.ts';
import { testAuthEnv } from './test-auth.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

export interface CallmeterProcess {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
  /** Sends the signal and resolves with the exit code. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Runs services/main.ts as a separate process, the way `npm start` does, and waits for /healthz. */
export async function startCallmeter(env: Record<string, string>, timeoutMs = 60_000): Promise<CallmeterProcess> {
  const port = await freePort();
  // One process (node with tsx as its loader), so that a signal reaches callmeter itself; the tsx
  // CLI would run it as a child that outlives a SIGKILL of its parent.
  const child = spawn(process.execPath, callmeterNodeArgs('services/main.ts'), {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...callmeterEnv(),
      ...testAuthEnv(),
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const url = `http://127.0.0.1:${port}`;
  const alive = eventually(async () => {
    if (child.exitCode !== null) throw new Error(`callmeter exited with ${child.exitCode}: ${output}`);
    const response = await fetch(`${url}/healthz`);
    if (response.status !== 200) throw new Error(`healthz answered ${response.status}`);
  }, timeoutMs);
  try {
    await alive;
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  return {
    url,
    child,
    output: () => output,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null) child.kill(signal);
      // A process that has not stopped well past its shutdown timeout (10 s) is killed, so that one hung
      // process fails its own test (an exit code of null) instead of holding up the run; said on stderr.
      const stuck = setTimeout(() => {
        process.stderr.write(
          `callmeter (pid ${child.pid}) did not stop within 30 s of ${signal}: killed\n${output.slice(-2000)}\n`,
        );
        child.kill('SIGKILL');
      }, 30_000);
      try {
        return await exited;
      } finally {
        clearTimeout(stuck);
      }
    },
  };
}
