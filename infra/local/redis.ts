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
    private readonly maxmemory: string,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  /** `maxmemory`: Redis's own size notation; the soak raises it to run for half an hour (see bench/soak). */
  static async create(folder: string, { maxmemory = '256mb' }: { maxmemory?: string } = {}): Promise<LocalRedis> {
    await mkdir(folder, { recursive: true });
    return new LocalRedis(folder, await freePort(), maxmemory);
  }

  async start(): Promise<void> {
    if (this.process !== null) return;
    // noeviction: a full Redis refuses writes (ingest answers 503, the consumer retries its batch) instead of
    // evicting a session, a number or a live-usage claim, whose silent loss would break exactly-once.
    // Live state expires by its own TTLs; maxmemory only bounds what a flood could pile up meanwhile.
    const memory = ['--maxmemory', this.maxmemory, '--maxmemory-policy', 'noeviction'];
    const args = [
      '--port',
      String(this.port),
      '--bind',
      '127.0.0.1',
      '--dir',
      this.folder,
      '--appendonly',
      'yes',
      '--save',
      '',
      '--protected-mode',
      'yes',
      ...memory,
    ];
    this.process = spawnLogged('redis-server', args, path.join(this.folder, 'redis.log'));
    const died = this.process.exited.then((code) =>
      Promise.reject(new Error(`redis-server exited with ${code}; see ${this.folder}/redis.log`)),
    );
    await Promise.race([waitForPort(this.port, 20_000), died]);
  }

  async stop(): Promise<void> {
    if (this.process === null) return;
    await stopProcess(this.process, 10_000);
    this.process = null;
  }
}
