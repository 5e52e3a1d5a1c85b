import { createRequire } from 'node:module';
import path from 'node:path';
import { CapWatcher, sessionBudgetOf, type CapCallback, type SessionBudget, type SessionBudgetAnswer } from './caps.ts';
import { DEAD_LETTER_FILE, DeadLetterFile, deadLetter, type DeadLetter } from './dead-letters.ts';
import { usageBody, type RecordFields, type UsageBody } from './records.ts';
import { MemoryPending, SpoolPending, type Pending } from './spool.ts';

const BATCH_PATH = '/api/usage/events/batch';
// package.json is the one place for the version: one level up from src/ and from the built dist/ alike.
const { version: VERSION } = createRequire(import.meta.url)('../package.json') as { version: string };
const MAX_BATCH = 1000;

/**
 * An event the server refused for what it holds: moved to the dead letters (never dropped, never sent
 * again by the client; `callmeter dead-letters resend` sends it again). `status` is the HTTP status when
 * the event was refused as a whole request (413 for one too large), null when the batch's answer
 * refused it as an item (`errors` are then that item's, e.g. a 409's message).
 */
export interface Rejected {
  readonly body: UsageBody;
  readonly errors: unknown;
  readonly status: number | null;
}

/** The server refused the client's credentials (401) or their right to send (403); nothing is dropped. */
export interface AuthError {
  readonly status: number;
  readonly detail: unknown;
  /** Events kept (in the spool or in memory) until the credentials are fixed. */
  readonly pending: number;
}

export interface CallmeterStats {
  readonly pending: number;
  readonly sent: number;
  readonly rejected: number;
  readonly authErrors: number;
  readonly retries: number;
  /** Reads of a watched call's standing (GET /api/sessions/{id}/budget). */
  readonly capChecks: number;
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
  /** Events that may wait in memory without a spool (default 100,000); past it record() throws QueueFullError. */
  readonly maxQueue?: number;
  /** A folder for the on-disk spool (and the dead letters beside it): events survive a restart of the worker. */
  readonly spoolDir?: string;
  /** Where dead letters go (default: `callmeter-dead-letters.jsonl` in spoolDir; without either, memory). */
  readonly deadLetterFile?: string;
  readonly onRejected?: (rejected: Rejected) => void;
  readonly onAuthError?: (error: AuthError) => void;
  readonly logger?: Logger;
  readonly backoffBaseMs?: number;
  readonly backoffCapMs?: number;
  /** The longest wait between attempts while the credentials are refused (default 60,000 ms). */
  readonly authBackoffCapMs?: number;
  /** Attempts of a session call (default 8). */
  readonly sessionAttempts?: number;
  /** A watched call's standing is read at most this often, after its usage was sent (default 2,000 ms). */
  readonly capCheckIntervalMs?: number;
}

export interface Session {
  readonly id: string;
  readonly [field: string]: unknown;
}

/** A library's default: warnings and errors on the worker's console, unless a logger is given. */
// eslint-disable-next-line no-console
export const CONSOLE_LOGGER: Logger = { warn: (m) => console.warn(m), error: (m) => console.error(m) };

const retryable = (status: number) => status === 408 || status === 429 || status >= 500;

// What a batch answered as a whole means for its events: the credentials (held until fixed), a
// transient fault (retried), or a request the server will not take in this size or shape (split, and a
// single event refused so is dead). Anything else (a 404 of a wrong baseUrl, a proxy's 405) is no
// verdict on the events: they are held and retried, never dropped.
const AUTH = new Set([401, 403]);
const SPLIT = new Set([400, 413, 422]);

/** What the batch route answers for each item (test/openapi/api-usage.ts checks it against the OpenAPI document). */
export type ItemAnswer = { index: number; status: string; errors?: unknown };

/** An item refused for the credential's rights (a bound key's other tenant), not for what it holds. */
function forbidden(errors: unknown): boolean {
  return (
    Array.isArray(errors) &&
    errors.length > 0 &&
    errors.every((error) => (error as { type?: unknown } | null)?.type === 'forbidden')
  );
}

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
 * A client for one worker process. record() only queues (in memory, or on disk with spoolDir) and
 * returns at once; batches of up to batchSize go to POST /api/usage/events/batch when full or every
 * flushIntervalMs; network errors, timeouts, 408, 429 and 5xx are retried with backoff and jitter
 * (honouring Retry-After) while the client is open, always with the same event ids, which callmeter
 * counts once. An event leaves the queue only when the server took it, or refused it for what it holds
 * and it is in the dead letters; refused credentials (401, 403) keep every event until fixed.
 */
export class Callmeter {
  private readonly base: string;
  private readonly headers: Record<string, string>;
  private readonly pending: Pending;
  private readonly deadLetterFile: DeadLetterFile | null;
  private readonly memoryDeadLetters: DeadLetter[] = [];
  private authFailing = false;
  private wakeSleep: (() => void) | null = null;
  private sending: Promise<void> = Promise.resolve();
  private fullBatchQueued = false;
  /** Drains scheduled and not finished: the interval adds none while one waits (a long outage queues nothing). */
  private scheduled = 0;
  private readonly stopping = new AbortController();
  private readonly timer: NodeJS.Timeout;
  private readonly options: Required<
    Omit<CallmeterOptions, 'apiKey' | 'onRejected' | 'onAuthError' | 'spoolDir' | 'deadLetterFile'>
  > &
    Pick<CallmeterOptions, 'onRejected' | 'onAuthError'>;
  // Counters a worker can read (or export): events the server took, events moved to the dead letters,
  // answers refusing the credentials, and batch attempts to be retried.
  private readonly spooled: boolean;
  private readonly caps: CapWatcher;
  rejectedCount = 0;
  sentCount = 0;
  authErrorCount = 0;
  retryCount = 0;

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
      onAuthError: options.onAuthError,
      logger: options.logger ?? CONSOLE_LOGGER,
      backoffBaseMs: options.backoffBaseMs ?? 250,
      backoffCapMs: options.backoffCapMs ?? 10_000,
      authBackoffCapMs: options.authBackoffCapMs ?? 60_000,
      sessionAttempts: options.sessionAttempts ?? 8,
      capCheckIntervalMs: options.capCheckIntervalMs ?? 2000,
    };
    this.caps = new CapWatcher(
      (sessionId) => this.readBudget(sessionId),
      this.options.capCheckIntervalMs,
      this.options.logger,
    );
    this.pending = options.spoolDir ? new SpoolPending(options.spoolDir) : new MemoryPending();
    const deadLetters =
      options.deadLetterFile ?? (options.spoolDir ? path.join(options.spoolDir, DEAD_LETTER_FILE) : null);
    this.deadLetterFile = deadLetters === null ? null : new DeadLetterFile(deadLetters);
    this.spooled = options.spoolDir !== undefined;
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.headers = {
      'content-type': 'application/json',
      'user-agent': `callmeter-node/${VERSION}`,
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
    if (!this.spooled && this.pending.size >= this.options.maxQueue)
      throw new QueueFullError(
        `${this.options.maxQueue} usage events are waiting to be sent; give spoolDir to keep more on disk`,
      );
    const body = usageBody(fields);
    this.pending.add(body);
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

  /** Events in the dead letters (the file beside the spool, or memory without one). */
  async deadLetterCount(): Promise<number> {
    return this.deadLetterFile ? this.deadLetterFile.count() : this.memoryDeadLetters.length;
  }

  /** The dead letters: each {event_id, refused_at, status, errors, body}. */
  async deadLetters(): Promise<DeadLetter[]> {
    return this.deadLetterFile ? this.deadLetterFile.read() : [...this.memoryDeadLetters];
  }

  /** The counters and the queue's length, for a worker's metrics. */
  stats(): CallmeterStats {
    return {
      pending: this.pending.size,
      sent: this.sentCount,
      rejected: this.rejectedCount,
      authErrors: this.authErrorCount,
      retries: this.retryCount,
      capChecks: this.caps.checks,
    };
  }

  /** New credentials (e.g. from onAuthError): held events are sent with them at once. */
  setApiKey(apiKey: string | undefined): void {
    if (apiKey) this.headers.authorization = `Bearer ${apiKey}`;
    else delete this.headers.authorization;
    this.wakeSleep?.();
  }

  /** Resolves once every event recorded before the call was answered for. */
  flush(): Promise<void> {
    return this.schedule(true);
  }

  /** Flushes for at most timeoutMs, then stops retrying; true when nothing was left unsent. */
  async close(timeoutMs = 30_000): Promise<boolean> {
    if (this.stopping.signal.aborted) return this.pending.size === 0;
    clearInterval(this.timer);
    this.caps.close();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => (timer = setTimeout(resolve, timeoutMs)));
    await Promise.race([this.flush(), deadline]);
    clearTimeout(timer);
    this.stopping.abort();
    await this.sending.catch(() => undefined);
    const left = this.pending.size;
    if (left > 0 && this.spooled)
      this.options.logger.warn(`callmeter: ${left} usage events stay in the spool for the next start`);
    else if (left > 0)
      this.options.logger.error(`callmeter: ${left} usage events were not sent before close; they are lost`);
    if (this.memoryDeadLetters.length > 0)
      this.options.logger.error(
        `callmeter: ${this.memoryDeadLetters.length} refused usage events were kept in memory only (no spoolDir or deadLetterFile); they are lost`,
      );
    this.pending.close();
    return left === 0;
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

  /** Ends the session (COMPLETED or FAILED); its cap is watched no more. */
  endSession(sessionId: string, status: 'COMPLETED' | 'FAILED' = 'COMPLETED'): Promise<Session> {
    this.caps.unwatch(sessionId);
    return this.updateSession(sessionId, { status });
  }

  /** GET /api/sessions/{id}/budget: the call's spend against its per-call cap, and whether it may go on. */
  async sessionBudget(sessionId: string): Promise<SessionBudget> {
    const answer = await this.call('GET', `/api/sessions/${encodeURIComponent(sessionId)}/budget`, undefined);
    return sessionBudgetOf(answer as unknown as SessionBudgetAnswer);
  }

  /**
   * Calls onCapReached(standing) once, when the call's standing turns `allowed: false` (its per-call cap
   * reached, or a blocking budget of its scope spent). The standing is read after this client's usage of
   * the call was acknowledged, at most every capCheckIntervalMs, apart from the batches: never in the way
   * of usage; a failed read is logged and retried. It stops once the callback ran, at endSession(), or at
   * the returned unwatch.
   */
  watchCap(sessionId: string, onCapReached: CapCallback): () => void {
    this.caps.watch(sessionId, onCapReached);
    return () => this.caps.unwatch(sessionId);
  }

  /** One read of the standing for the watch: a failure throws, and the watch retries it later. */
  private async readBudget(sessionId: string): Promise<SessionBudget> {
    const path = `/api/sessions/${encodeURIComponent(sessionId)}/budget`;
    const response = await this.request('GET', path, undefined);
    const text = await response.text();
    if (response.status !== 200)
      throw new CallmeterError(
        `GET ${path}: ${response.status} ${text.slice(0, 500)}`,
        response.status,
        detailOf(text),
      );
    return sessionBudgetOf(JSON.parse(text) as SessionBudgetAnswer);
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
      body: body === undefined ? undefined : JSON.stringify(body),
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

  /**
   * Sends the oldest events until the server took each or refused it for what it holds (then it is a
   * dead letter). Everything else keeps them and waits; returns early only when the client closes.
   */
  private async sendOneBatch(): Promise<void> {
    let batch = this.pending.oldest(this.options.batchSize);
    let size = batch.length;
    const backoff = new Backoff(this.options.backoffBaseMs, this.options.backoffCapMs);
    const held = new Backoff(this.options.backoffBaseMs, this.options.authBackoffCapMs);
    while (batch.length > 0 && !this.stopping.signal.aborted) {
      const part = batch.slice(0, size);
      let response: Response | null = null;
      let delay: number;
      try {
        response = await this.request(
          'POST',
          BATCH_PATH,
          part.map(([, body]) => body),
        );
      } catch (error) {
        // Also a timeout after the server may have stored it: the same ids go again.
        this.retryCount += 1;
        this.options.logger.warn(`callmeter: batch not answered (${String(error)}), retrying with the same event ids`);
        await this.sleep(backoff.next(null));
        continue;
      }
      const status = response.status;
      if (status === 200) {
        if (await this.settle(part, (await response.json()) as ItemAnswer[])) {
          this.authRecovered();
          batch = batch.slice(part.length);
          continue;
        }
        // Items held (forbidden for this credential): with whatever came since, after a wait.
        batch = this.pending.oldest(this.options.batchSize);
        size = batch.length;
        delay = held.next(null);
      } else {
        const detail = detailOf(await response.text());
        if (AUTH.has(status)) {
          this.authFailed(status, detail);
          delay = held.next(response);
        } else if (retryable(status)) {
          this.retryCount += 1;
          this.options.logger.warn(`callmeter: batch answered ${status}, retrying`);
          delay = backoff.next(response);
        } else if (SPLIT.has(status) && part.length > 1) {
          size = Math.max(1, Math.floor(part.length / 2));
          continue;
        } else if (SPLIT.has(status)) {
          const [seq, body] = part[0]!;
          if (await this.dead([[seq, body, status, detail]])) {
            batch = batch.slice(1);
            continue;
          }
          delay = held.next(null);
        } else {
          this.retryCount += 1;
          this.options.logger.error(
            `callmeter: POST ${BATCH_PATH} answered ${status} (${JSON.stringify(detail)}); the ${part.length} events are kept and retried: is baseUrl right?`,
          );
          delay = held.next(response);
        }
      }
      await this.sleep(delay);
    }
  }

  /** Removes what the answer settled; true unless some items are held for the credential's rights. */
  private async settle(part: [number, UsageBody][], answers: ItemAnswer[]): Promise<boolean> {
    const byIndex = new Map(answers.map((answer) => [answer.index, answer]));
    const done: number[] = [];
    const dead: [number, UsageBody, number | null, unknown][] = [];
    const refusedRights: unknown[] = [];
    part.forEach(([seq, body], index) => {
      const answer = byIndex.get(index);
      if (answer?.status === 'accepted' || answer?.status === 'duplicate') done.push(seq);
      else if (answer?.status === 'rejected' && forbidden(answer.errors)) refusedRights.push(answer.errors);
      else if (answer?.status === 'rejected') dead.push([seq, body, null, answer.errors]);
      // No answer for an item: it stays and goes again under its id.
    });
    this.sentCount += done.length;
    const settled = new Set(done);
    this.caps.sent(part.filter(([seq]) => settled.has(seq)).map(([, body]) => String(body.session_id)));
    this.pending.remove(done);
    const kept = await this.dead(dead);
    if (refusedRights.length > 0) this.authFailed(403, refusedRights[0]);
    return kept && refusedRights.length === 0 && done.length + dead.length === part.length;
  }

  /** Moves refused events to the dead letters, then out of the queue; false (all kept queued) if that failed. */
  private async dead(items: [number, UsageBody, number | null, unknown][]): Promise<boolean> {
    if (items.length === 0) return true;
    const letters = items.map(([, body, status, errors]) => deadLetter(body, status, errors));
    try {
      if (this.deadLetterFile) await this.deadLetterFile.add(letters);
      else this.memoryDeadLetters.push(...letters);
    } catch (error) {
      this.options.logger.error(
        `callmeter: could not write the dead letters (${String(error)}); the ${items.length} refused events stay queued`,
      );
      return false;
    }
    const where = this.deadLetterFile?.file ?? 'memory';
    for (const [, body, status, errors] of items) {
      this.rejectedCount += 1;
      this.options.logger.warn(
        `callmeter: usage event ${body.event_id} refused (${status ?? 'item'}): ${JSON.stringify(errors)}; kept in the dead letters (${where})`,
      );
      try {
        this.options.onRejected?.({ body, errors, status });
      } catch (error) {
        this.options.logger.error(`callmeter: onRejected threw ${String(error)}`);
      }
    }
    this.pending.remove(items.map(([seq]) => seq));
    return true;
  }

  private authFailed(status: number, detail: unknown): void {
    this.authErrorCount += 1;
    const pending = this.pending.size;
    if (this.authFailing) {
      this.options.logger.warn(
        `callmeter: credentials still refused (${status} ${JSON.stringify(detail)}); ${pending} usage events kept`,
      );
      return;
    }
    this.authFailing = true;
    this.options.logger.error(
      `callmeter: the server refused the API key (${status} ${JSON.stringify(detail)}); the ${pending} usage events are kept ${this.spooled ? 'in the spool' : 'in memory'} and retried every ${this.options.authBackoffCapMs / 1000} s at most until the key is fixed (setApiKey(), or a restart with the right key)`,
    );
    try {
      this.options.onAuthError?.({ status, detail, pending });
    } catch (error) {
      this.options.logger.error(`callmeter: onAuthError threw ${String(error)}`);
    }
  }

  private authRecovered(): void {
    if (!this.authFailing) return;
    this.authFailing = false;
    this.options.logger.warn('callmeter: the server takes the credentials again; sending the kept usage events');
  }

  /** Waits out a backoff; cut short by close() and by setApiKey(). */
  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      if (this.stopping.signal.aborted) return resolve();
      const done = () => {
        clearTimeout(timer);
        this.stopping.signal.removeEventListener('abort', done);
        if (this.wakeSleep === done) this.wakeSleep = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.stopping.signal.addEventListener('abort', done, { once: true });
      this.wakeSleep = done;
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
