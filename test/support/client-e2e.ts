import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import path from 'node:path';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from './api.ts';
import { startCallmeter, type CallmeterProcess } from './callmeter-process.ts';
import { eventually } from './harness.ts';

export const ROOT = path.resolve(import.meta.dirname, '../..');
const BATCH_PATH = '/api/usage/events/batch';

/**
 * The embedded callmeter (`npm start`) behind a proxy with one fixed address, as a worker sees its
 * server: the proxy can restart the process under it (same DATA_DIR, new port), and can withhold the
 * answer to a batch the server has already stored, so that the client times out and sends it again.
 * While the process is down the proxy closes every connection at once, as a refused connect would.
 */
export class FlakyCallmeter {
  private server: CallmeterProcess | null = null;
  private proxy: http.Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly batchHooks = new Map<number, () => void | Promise<void>>();
  /** Batches the server answered, withheld ones included. */
  answeredBatches = 0;
  withheld = 0;
  restarts = 0;
  private withholdNext = false;
  /** While set, every batch's connection is closed unanswered, as if the server were down. */
  refuseBatches = false;

  constructor(private readonly env: Record<string, string>) {}

  get url(): string {
    const address = this.proxy?.address() as AddressInfo | null;
    if (!address) throw new Error('the proxy is not listening');
    return `http://127.0.0.1:${address.port}`;
  }

  /** The process itself, bypassing the proxy (for the test's own reads). */
  get directUrl(): string {
    if (this.server === null) throw new Error('callmeter is not running');
    return this.server.url;
  }

  async start(): Promise<void> {
    this.server = await startCallmeter(this.env);
    // A client that hangs up mid-request (a killed worker, a client's own timeout) aborts the read of
    // its body: there is nobody left to answer.
    this.proxy = http.createServer((request, response) =>
      this.forward(request, response).catch(() => request.socket.destroy()),
    );
    this.proxy.on('connection', (socket) => {
      this.sockets.add(socket);
      socket.once('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.proxy!.listen(0, '127.0.0.1', resolve));
  }

  /** Runs `hook` right after the server answered the n-th batch (1-based), before the client sees it. */
  afterBatch(n: number, hook: () => void | Promise<void>): void {
    this.batchHooks.set(n, hook);
  }

  /** The next batch is stored by the server, and its answer never reaches the client. */
  withholdNextAnswer(): void {
    this.withholdNext = true;
  }

  /** Stops the process (SIGTERM, or SIGKILL to crash it) and starts it again on the same data. */
  async restart(signal: NodeJS.Signals): Promise<void> {
    const down = this.server;
    this.server = null;
    await down?.stop(signal);
    this.server = await startCallmeter(this.env);
    this.restarts += 1;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => (this.proxy ? this.proxy.close(() => resolve()) : resolve()));
    await this.server?.stop('SIGTERM');
  }

  output(): string {
    return this.server?.output() ?? '';
  }

  private async forward(request: http.IncomingMessage, response: http.ServerResponse): Promise<void> {
    const body = await readAll(request);
    const upstream = this.server;
    if (upstream === null || (this.refuseBatches && request.url === BATCH_PATH)) {
      request.socket.destroy();
      return;
    }
    let answer: { status: number; headers: http.IncomingHttpHeaders; body: Buffer };
    try {
      answer = await send(upstream.url, request, body);
    } catch {
      request.socket.destroy();
      return;
    }
    if (request.method === 'POST' && request.url === BATCH_PATH && answer.status === 200) {
      this.answeredBatches += 1;
      const hook = this.batchHooks.get(this.answeredBatches);
      if (hook) await hook();
      if (this.withholdNext) {
        this.withholdNext = false;
        this.withheld += 1;
        return; // stored, never answered: the client's timeout decides
      }
    }
    response.writeHead(answer.status, answer.headers);
    response.end(answer.body);
  }
}

function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk));
    stream.once('end', () => resolve(Buffer.concat(chunks)));
    stream.once('error', reject);
  });
}

function send(
  base: string,
  request: http.IncomingMessage,
  body: Buffer,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  const headers = { ...request.headers };
  delete headers.host;
  delete headers.connection;
  return new Promise((resolve, reject) => {
    const outgoing = http.request(`${base}${request.url}`, { method: request.method, headers }, (incoming) => {
      readAll(incoming).then((answer) => {
        const answerHeaders = { ...incoming.headers };
        delete answerHeaders.connection;
        delete answerHeaders['keep-alive'];
        resolve({ status: incoming.statusCode ?? 502, headers: answerHeaders, body: answer });
      }, reject);
    });
    outgoing.once('error', reject);
    outgoing.end(body);
  });
}

export interface WorkerRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  /** The JSON lines the worker printed, in order. */
  readonly lines: readonly Record<string, unknown>[];
}

/** Runs a client's e2e worker to its end (from `cwd`: the npm project of a TypeScript worker). */
export function runWorker(
  command: string,
  args: readonly string[],
  timeoutMs: number,
  cwd = ROOT,
  env: NodeJS.ProcessEnv = process.env,
): Promise<WorkerRun> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      // Only the JSON lines: a test runner's output (pytest's) may start other lines with a brace too.
      const lines = stdout.split('\n').flatMap((line) => (line.startsWith('{') ? jsonLine(line) : []));
      resolve({ code, stdout, stderr, lines });
    });
  });
}

function jsonLine(line: string): Record<string, unknown>[] {
  try {
    return [JSON.parse(line) as Record<string, unknown>];
  } catch {
    return [];
  }
}

/** The ledger a worker wrote: one JSON line per distinct usage event it recorded. */
export function readLedger(file: string): Record<string, unknown>[] {
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * What the rate card and catalogs make of the ledger: each distinct body priced once by
 * POST /api/rates/quote (the consumer's own pricing function), times how often it occurs.
 */
export async function pricedTotal(baseUrl: string, ledger: readonly Record<string, unknown>[]): Promise<string> {
  const counts = new Map<string, number>();
  for (const body of ledger) {
    const shape = JSON.stringify(body);
    counts.set(shape, (counts.get(shape) ?? 0) + 1);
  }
  let total = new Exact(0);
  for (const [shape, count] of counts) {
    const quote = await call<{ total_cost: string; cost_source: string }>(
      baseUrl,
      'POST',
      '/api/rates/quote',
      JSON.parse(shape),
    );
    if (quote.status !== 200) throw new Error(`quote ${quote.status} for ${shape}: ${JSON.stringify(quote.body)}`);
    if (quote.body.cost_source !== 'computed') throw new Error(`nothing prices ${shape}: ${quote.body.cost_source}`);
    total = total.plus(new Exact(quote.body.total_cost).times(count));
  }
  return total.toFixed();
}

export interface Summary {
  readonly total_cost: string;
  readonly event_count: number;
  readonly unpriced_event_count: number;
}

/** The tenant's summary once it counts `events` events (the writer may still be storing the last batch). */
export async function summaryOf(baseUrl: string, userId: string, events: number): Promise<Summary> {
  return eventually(async () => {
    const answer = await call<Summary>(baseUrl, 'GET', '/api/costs/summary', undefined, { 'x-user-id': userId });
    if (answer.status !== 200) throw new Error(`summary ${answer.status}`);
    if (answer.body.event_count < events) throw new Error(`${answer.body.event_count} of ${events} events`);
    return answer.body;
  }, 30_000);
}
