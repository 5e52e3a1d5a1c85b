import { usageBody, type RecordFields, type UsageBody } from './records.ts';

const BATCH_PATH = '/api/usage/events/batch';
const MAX_BATCH = 1000;

/** An event the server refused for what it holds (a 4xx): reported, never sent again. */
export interface Rejected {
  readonly body: UsageBody;
  readonly errors: unknown;
}

/** record() refused an event: maxQueue events already wait to be sent. */
export class QueueFullError extends Error {}

/** A session call the server refused (4xx), or that got no answer within its attempts. */
export class CallmeterError extends Error {
  constructor(
    message: string,
    readonly status: number | null = null,
    readonly detail: unknown = null,
  ) {
    super(message);
  }
}

export interface Logger {
  warn(message: string): void;
  error(message: string): void;
}

export interface CallmeterOptions {
  readonly baseUrl: string;
  readonly apiKey?: string;
  /** Events per batch (1..1000, default 200). */
  readonly batchSize?: number;
  /** A batch goes at least this often while events wait (default 1,000 ms). */
  readonly flushIntervalMs?: number;
  /** One request's timeout (default 10,000 ms); an unanswered batch is sent again with the same ids. */
  readonly timeoutMs?: number;
  /** Events that may wait in memory (default 100,000); past it record() throws QueueFullError. */
  readonly maxQueue?: number;
  readonly onRejected?: (rejected: Rejected) => void;
  readonly logger?: Logger;
  readonly backoffBaseMs?: number;
  readonly backoffCapMs?: number;
  /** Attempts of a session call (default 8). */
  readonly sessionAttempts?: number;
}

export interface Session {
  readonly id: string;
  readonly [field: string]: unknown;
}

/** A library's default: warnings and errors on the worker's console, unless a logger is given. */
// eslint-disable-next-line no-console
export const CONSOLE_LOGGER: Logger = { warn: (m) => console.warn(m), error: (m) => console.error(m) };

const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

/** Retry-After in milliseconds (seconds or an HTTP date), when sent. */
function retryAfterMs(response: Response | null): number | null {
  const value = response?.headers.get('retry-after');
  if (!value) return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, at - Date.now());
}

/**
 * Exponential backoff with full jitter, at least what Retry-After asks. By hand: the package has no
 * runtime dependency beyond Node, and this is a few lines.
 */
class Backoff {
  private attempt = 0;
  constructor(
    private readonly baseMs: number,
    private readonly capMs: number,
  ) {}

  next(response: Response | null): number {
    const delay = Math.random() * Math.min(this.capMs, this.baseMs * 2 ** this.attempt);
    this.attempt += 1;
    const after = retryAfterMs(response);
    return after === null ? delay : Math.max(delay, after);
  }
}

/**
 * A client for one worker process. record() only queues and returns at once; batches of up to
 * batchSize go to POST /api/usage/events/batch when full or every flushIntervalMs; network errors,
 * timeouts, 408, 429 and 5xx are retried with backoff and jitter (honouring Retry-After) while the
 * client is open, always with the same event ids, which callmeter counts once.
 */
export class Callmeter {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly pending = new Map<number, UsageBody>();
  private nextSeq = 0;
  private sending: Promise<void> = Promise.resolve();
  private fullBatchQueued = false;
  /** Drains scheduled and not finished: the interval adds none while one waits (a long outage queues nothing). */
  private scheduled = 0;
  private readonly stopping = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly options: Required<Omit<CallmeterOptions, 'apiKey' | 'onRejected'>> &
    Pick<CallmeterOptions, 'onRejected'>;
  rejectedCount = 0;
  sentCount = 0;

  constructor(options: CallmeterOptions) {
    const batchSize = options.batchSize ?? 200;
    if (batchSize < 1 || batchSize > MAX_BATCH) throw new RangeError(`batchSize must be 1 to ${MAX_BATCH}`);
    this.options = {
      baseUrl: options.baseUrl,
      batchSize,
      flushIntervalMs: options.flushIntervalMs ?? 1000,
      timeoutMs: options.timeoutMs ?? 10_000,
      maxQueue: options.maxQueue ?? 100_000,
      onRejected: options.onRejected,
      logger: options.logger ?? CONSOLE_LOGGER,
      backoffBaseMs: options.backoffBaseMs ?? 250,
      backoffCapMs: options.backoffCapMs ?? 10_000,
      sessionAttempts: options.sessionAttempts ?? 8,
    };
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.headers = {
      'content-type': 'application/json',
      'user-agent': 'callmeter-node/0.1.0',
      ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}),
    };
    this.timer = setInterval(() => {
      if (this.pending.size > 0 && this.scheduled === 0) void this.schedule(true);
    }, this.options.flushIntervalMs);
    // The interval alone does not keep a worker alive: close() is what sends the last events.
    this.timer.unref();
  }

  /** Queues one usage event and returns its event id; never waits on the network. */
  record(fields: RecordFields): string {
    if (this.stopping.signal.aborted) throw new Error('the client is closed');
    if (this.pending.size >= this.options.maxQueue)
      throw new QueueFullError(`${this.options.maxQueue} usage events are waiting to be sent`);
    const body = usageBody(fields);
    this.nextSeq += 1;
    this.pending.set(this.nextSeq, body);
    if (this.pending.size >= this.options.batchSize && !this.fullBatchQueued) {
      this.fullBatchQueued = true;
      void this.schedule(false).finally(() => (this.fullBatchQueued = false));
    }
    return body.event_id;
  }

  /** Events recorded and not yet answered by the server. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Resolves once every event recorded before the call was answered for. */
  flush(): Promise<void> {
    return this.schedule(true);
  }

  /** Flushes for at most timeoutMs, then stops retrying; true when nothing was left unsent. */
  async close(timeoutMs = 30_000): Promise<boolean> {
    clearInterval(this.timer);
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.flush(), deadline]);
    clearTimeout(timer);
    this.stopping.abort();
    await this.sending.catch(() => undefined);
    if (this.pending.size > 0)
      this.options.logger.error(
        `callmeter: ${this.pending.size} usage events were not sent before close; they are lost`,
      );
    return this.pending.size === 0;
  }

  startSession(fields: {
    roomName: string;
    userId: string;
    agentId?: string;
    sessionData?: Record<string, unknown>;
  }): Promise<Session> {
    return this.call('POST', '/api/sessions/', {
      room_name: fields.roomName,
      user_id: fields.userId,
      ...(fields.agentId === undefined ? {} : { agent_id: fields.agentId }),
      ...(fields.sessionData === undefined ? {} : { session_data: fields.sessionData }),
    });
  }

  updateSession(sessionId: string, fields: Record<string, unknown>): Promise<Session> {
    return this.call('PATCH', `/api/sessions/${encodeURIComponent(sessionId)}`, fields);
  }

  endSession(sessionId: string, status: 'COMPLETED' | 'FAILED' = 'COMPLETED'): Promise<Session> {
    return this.updateSession(sessionId, { status });
  }

  private async call(method: string, path: string, body: unknown): Promise<Session> {
    const backoff = new Backoff(this.options.backoffBaseMs, this.options.backoffCapMs);
    let last = '';
    for (let attempt = 0; attempt < this.options.sessionAttempts; attempt += 1) {
      let response: Response | null = null;
      try {
        response = await this.request(method, path, body);
        if (response.status < 300) return (await response.json()) as Session;
        const text = await response.text();
        if (!retryable(response.status))
          throw new CallmeterError(`${method} ${path}: ${response.status} ${text}`, response.status, detailOf(text));
        last = String(response.status);
      } catch (error) {
        if (error instanceof CallmeterError) throw error;
        last = String(error);
      }
      await this.sleep(backoff.next(response));
    }
    throw new CallmeterError(`${method} ${path}: no answer after ${this.options.sessionAttempts} attempts (${last})`);
  }

  private request(method: string, path: string, body: unknown): Promise<Response> {
    return fetch(`${this.base}${path}`, {
      method,
      headers: this.headers,
      body: JSON.stringify(body),
      signal: AbortSignal.any([AbortSignal.timeout(this.options.timeoutMs), this.stopping.signal]),
    });
  }

  /** One batch at a time, in order: each drain runs after the previous one. */
  private schedule(everything: boolean): Promise<void> {
    this.scheduled += 1;
    const run = this.sending.then(() => this.drain(everything)).finally(() => (this.scheduled -= 1));
    this.sending = run.catch(() => undefined);
    return run;
  }

  private async drain(everything: boolean): Promise<void> {
    const least = everything ? 1 : this.options.batchSize;
    while (this.pending.size >= least && !this.stopping.signal.aborted) await this.sendOneBatch();
  }

  private async sendOneBatch(): Promise<void> {
    const batch = [...this.pending].slice(0, this.options.batchSize);
    const bodies = batch.map(([, body]) => body);
    const backoff = new Backoff(this.options.backoffBaseMs, this.options.backoffCapMs);
    while (!this.stopping.signal.aborted) {
      let response: Response | null = null;
      try {
        response = await this.request('POST', BATCH_PATH, bodies);
        if (response.status === 200) {
          this.settle(batch, (await response.json()) as { index: number; status: string; errors?: unknown }[]);
          return;
        }
        const text = await response.text();
        if (!retryable(response.status)) {
          // The batch as a whole is refused (401, 403, 413): no resend can change that.
          this.reject(batch.map(([seq, body]) => [seq, body, { status: response!.status, detail: detailOf(text) }]));
          return;
        }
        this.options.logger.warn(`callmeter: batch answered ${response.status}, retrying`);
      } catch (error) {
        // Also a timeout after the server may have stored it: the same ids go again.
        this.options.logger.warn(`callmeter: batch not answered (${String(error)}), retrying with the same event ids`);
      }
      await this.sleep(backoff.next(response));
    }
  }

  private settle(batch: [number, UsageBody][], answers: { index: number; status: string; errors?: unknown }[]): void {
    const byIndex = new Map(answers.map((answer) => [answer.index, answer]));
    const rejected: [number, UsageBody, unknown][] = [];
    batch.forEach(([seq, body], index) => {
      const answer = byIndex.get(index);
      if (answer?.status === 'rejected') rejected.push([seq, body, answer.errors]);
    });
    this.reject(rejected);
    this.sentCount += batch.length - rejected.length;
    for (const [seq] of batch) this.pending.delete(seq);
  }

  private reject(items: [number, UsageBody, unknown][]): void {
    for (const [seq, body, errors] of items) {
      this.rejectedCount += 1;
      this.pending.delete(seq);
      this.options.logger.warn(`callmeter: usage event ${body.event_id} rejected: ${JSON.stringify(errors)}`);
      try {
        this.options.onRejected?.({ body, errors });
      } catch (error) {
        this.options.logger.error(`callmeter: onRejected threw ${String(error)}`);
      }
    }
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopping.signal.aborted) return resolve();
      const timer = setTimeout(done, ms);
      const onAbort = () => done();
      this.stopping.signal.addEventListener('abort', onAbort, { once: true });
      function done() {
        clearTimeout(timer);
        resolve();
      }
    });
  }
}

function detailOf(text: string): unknown {
  try {
    return (JSON.parse(text) as { detail?: unknown }).detail ?? text;
  } catch {
    return text.slice(0, 500);
  }
}
