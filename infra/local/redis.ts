import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { freePort, waitForPort } from './free-port.ts';
import { spawnLogged, stopProcess, type Spawned } from './process.ts';

/** Debian's redis-server on a free loopback port with its own data folder (kept across restarts). */
export class LocalRedis {
  private process: Spawned | null = null;

  private constructor(
    readonly folder: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  static async create(folder: string): Promise<LocalRedis> {
    await mkdir(folder, { recursive: true });
    return new LocalRedis(folder, await freePort());
  }

  async start(): Promise<void> {
    if (this.process !== null) return;
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.folder, '--appendonly', 'yes', '--save', '', '--protected-mode', 'yes'];
    this.process = spawnLogged('redis-server', args, path.join(this.folder, 'redis.log'));
    const died = this.process.exited.then((code) => Promise.reject(new Error(`redis-server exited with ${code}; see ${this.folder}/redis.log`)));
    await Promise.race([waitForPort(this.port, 20_000), died]);
  }

  async stop(): Promise<void> {
    if (this.process === null) return;
    await stopProcess(this.process, 10_000);
    this.process = null;
  }
}
