import type { Server } from 'node:http';
import type Koa from 'koa';
import type { Logger } from './logger.ts';

type Closer = () => Promise<void>;

/**
 * Ordered shutdown: closers run in reverse order of registration (the HTTP server, which was
 * started last, stops taking requests and drains first; the clients it used close after).
 * The whole sequence is bounded by a timeout so a hung dependency cannot block a deploy.
 */
export class Shutdown {
  private readonly closers: { name: string; close: Closer }[] = [];
  private running: Promise<void> | null = null;
  private readonly stopping = new AbortController();
  /** Aborted when shutdown begins, before any closer runs: long-lived answers (event streams) end on it, so the HTTP server can drain. */
  readonly signal: AbortSignal = this.stopping.signal;

  constructor(
    private readonly log: Logger,
    private readonly timeoutMs: number,
  ) {}

  add(name: string, close: Closer): void {
    this.closers.push({ name, close });
  }

  run(reason: string): Promise<void> {
    this.running ??= this.closeAll(reason);
    return this.running;
  }

  /** SIGTERM and SIGINT drain in-flight work, then exit; a second signal exits at once. */
  installSignalHandlers(): void {
    const onSignal = (signal: NodeJS.Signals) => {
      if (this.running !== null) process.exit(1);
      void this.run(signal).then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', onSignal);
    process.once('SIGINT', onSignal);
  }

  private async closeAll(reason: string): Promise<void> {
    this.log.info({ reason }, 'shutdown_started');
    this.stopping.abort();
    const deadline = new Promise<'timeout'>((resolve) => setTimeout(resolve, this.timeoutMs, 'timeout').unref());
    for (const { name, close } of [...this.closers].reverse()) {
      const started = Date.now();
      const outcome = await Promise.race([close().then(() => 'closed' as const), deadline]).catch((error: unknown) => {
        this.log.error({ err: error, component: name }, 'shutdown_close_failed');
        return 'failed' as const;
      });
      this.log.debug({ component: name, ms: Date.now() - started }, 'shutdown_closed');
      if (outcome === 'timeout') {
        this.log.error({ component: name }, 'shutdown_timed_out');
        return;
      }
    }
    this.log.info({ reason }, 'shutdown_finished');
  }
}

/** Listens and resolves once the port is bound; the returned closer drains in-flight requests. */
export async function listen(app: Koa, port: number, host: string): Promise<{ server: Server; close: Closer }> {
  const server = app.listen(port, host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', reject);
  });
  // close() waits for every connection to end; keep-alive connections become idle once their
  // in-flight request is answered, so they are swept until the server has closed.
  const close = () =>
    new Promise<void>((resolve, reject) => {
      const sweep = setInterval(() => server.closeIdleConnections(), 50);
      server.close((error) => {
        clearInterval(sweep);
        if (error) reject(error);
        else resolve();
      });
      server.closeIdleConnections();
    });
  return { server, close };
}
