import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { freePort } from '../../infra/local/free-port.ts';
import { callmeterEnv, callmeterNodeArgs } from '../../infra/local/process.ts';
import type { DriveOptions, DriveResult } from '../load/drive.ts';

/** The processes of `npm run bench` and `npm run soak`: callmeter, the baselines and the load driver. */
export const ROOT = path.resolve(import.meta.dirname, '../..');
export const say = (line: string) => process.stdout.write(`${line}\n`);
export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface Server {
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * A child process running a TypeScript entry point (a baseline or the load driver) with the Node
 * arguments callmeter runs with, so that baselines and callmeter share one setup; its last stdout
 * line is read as JSON.
 */
export function runJson<T>(file: string, args: readonly string[], env: Record<string, string> = {}): Promise<T> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...callmeterNodeArgs(file), ...args], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.once('exit', (code) => {
      const last = out.trim().split('\n').at(-1) ?? '';
      if (code === 0) resolve(JSON.parse(last) as T);
      else reject(new Error(`${file} exited with ${code}: ${out.slice(-500)}`));
    });
  });
}

/** A child process whose output goes to ours; resolves when it exits with 0. */
export function runInherited(file: string, env: Record<string, string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', file], {
      cwd: ROOT,
      env: { ...process.env, ...env },
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`${file} exited with ${code}`))));
  });
}

/** One run of the load driver (bench/load/drive.ts) in its own process. */
export const drive = (options: DriveOptions) => runJson<DriveResult>('bench/load/drive.ts', [JSON.stringify(options)]);

/**
 * Starts a server process (callmeter or the bare baseline) on a free loopback port and resolves once
 * it answers /healthz. `nodeArgs` go before callmeter's own Node arguments (the soak's --inspect).
 */
export async function startServer(
  file: string,
  env: Record<string, string>,
  nodeArgs: readonly string[] = [],
): Promise<Server> {
  const port = await freePort();
  const child = spawn(process.execPath, [...nodeArgs, ...callmeterNodeArgs(file)], {
    cwd: ROOT,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      ...callmeterEnv(),
      LOG_LEVEL: 'error',
      ...env,
      PORT: String(port),
      HOST: '127.0.0.1',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; i < 1200; i += 1) {
    if ((await fetch(`${url}/healthz`).catch(() => null))?.status === 200) {
      return {
        url,
        child,
        stop: async () => {
          child.kill('SIGTERM');
          await exited;
        },
      };
    }
    await sleep(100);
  }
  child.kill('SIGKILL');
  throw new Error(`${file} did not answer /healthz`);
}

/** Resident memory of a process, in MiB. */
export function rssMb(pid: number): number {
  return Math.round(residentMemory(pid).rss);
}

/** The CPU time a process has used so far, in ms (user and system, all its threads; /proc/<pid>/stat). */
export function cpuTimeMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // The fields after the command's name, which may hold spaces: utime and stime are the 12th and 13th.
  const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
}

// USER_HZ, which Linux fixes at 100 on every architecture Node runs on.
const CLOCK_TICKS_PER_S = 100;

/**
 * Resident memory of a process in MiB: all of it, and its anonymous part (heaps, stacks: what a leak
 * grows) apart from pages of mapped files (the code of the shared libraries, chdb's 540 MiB among them).
 */
export function residentMemory(pid: number): { rss: number; anon: number; file: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rss: kib('VmRSS') / 1024, anon: kib('RssAnon') / 1024, file: kib('RssFile') / 1024 };
}
