import { randomUUID } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { makeUsageEventBody } from './bodies.ts';

/** One request of the steady tenant: what it sent, the status it got (0: no answer) and how long it took. */
export interface SteadyRequest {
  readonly what: 'event' | 'batch';
  readonly at: string;
  readonly status: number;
  readonly ms: number;
  readonly detail?: string;
}

// resemble prices a character at 0.00004 on the default card.
const PRICE_PER_CHARACTER = new Exact('0.00004');
const BATCH_EVERY = 8;
const BATCH_SIZE = 5;
// Longer than the 1 s the suite allows, so that a stalled request is recorded rather than waited for forever.
const REQUEST_TIMEOUT_MS = 10_000;

/**
 * A well-behaved tenant that posts usage for its own session every 100 to 200 ms (and every eighth
 * time a small batch) until stopped, recording every request, and the exact cost of what it had accepted.
 */
export class SteadyTenant {
  readonly requests: SteadyRequest[] = [];
  total = new Exact(0);
  events = 0;
  private running = false;
  private loop: Promise<void> | null = null;

  constructor(
    private readonly url: string,
    readonly userId: string,
    readonly sessionId: string,
    /** Sent with every request: its credential where the process runs with AUTH_MODE=on. */
    private readonly headers: Record<string, string> = {},
  ) {}

  startedAt = 0;

  start(): void {
    this.startedAt = Date.now();
    this.running = true;
    this.loop = this.run();
  }

  /** Stops the loop after the request in flight and returns every request made. */
  async stop(): Promise<readonly SteadyRequest[]> {
    this.running = false;
    await this.loop;
    return this.requests;
  }

  private async run(): Promise<void> {
    for (let i = 0; this.running; i += 1) {
      const characters = Array.from(
        { length: i % BATCH_EVERY === BATCH_EVERY - 1 ? BATCH_SIZE : 1 },
        (_, k) => 1 + ((i * 7 + k) % 50),
      );
      await this.post(characters);
      await new Promise((resolve) => setTimeout(resolve, 100 + ((i * 37) % 100)));
    }
  }

  private async post(characters: readonly number[]): Promise<void> {
    const bodies = characters.map((quantity) =>
      makeUsageEventBody(this.sessionId, { user_id: this.userId, quantity, event_id: randomUUID() }),
    );
    const what = bodies.length === 1 ? 'event' : 'batch';
    const at = new Date().toISOString();
    const started = performance.now();
    try {
      const response = await fetch(`${this.url}/api/usage/events${what === 'batch' ? '/batch' : ''}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...this.headers },
        body: JSON.stringify(what === 'batch' ? bodies : bodies[0]),
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      });
      const text = await response.text();
      const ms = performance.now() - started;
      const accepted =
        response.ok &&
        (what === 'event' || (JSON.parse(text) as { status: string }[]).every((item) => item.status === 'accepted'));
      this.requests.push({
        what,
        at,
        status: response.status,
        ms,
        ...(accepted ? {} : { detail: text.slice(0, 300) }),
      });
      if (!accepted) return;
      this.events += characters.length;
      this.total = characters.reduce((sum, quantity) => sum.plus(PRICE_PER_CHARACTER.times(quantity)), this.total);
    } catch (error) {
      this.requests.push({ what, at, status: 0, ms: performance.now() - started, detail: String(error) });
    }
  }
}
