import { randomUUID } from 'node:crypto';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { TTS_RATE } from './load-driver.ts';

/** One event of the alert driver: its exact cost, and the fault phase it was born in. */
export interface AlertEvent {
  readonly id: string;
  readonly characters: number;
  readonly cost: Exact;
  readonly phase: string;
  /** When it was first sent (epoch ms). */
  readonly sentAt: number;
  /** When its 201 came (epoch ms); null until then. */
  acknowledgedAt: number | null;
}

export interface AlertTarget {
  readonly user_id: string;
  readonly session_id: string;
}

const RETRY_MS = 250;
const PACE_MS = 250;
/** An event unanswered this long fails the suite: it would leave a gap in the prefix sums. */
const GIVE_UP_MS = 180_000;

/**
 * One call posting usage the way a single worker does: one event at a time, each retried with the same
 * event_id until it is answered 201, the next sent only then. So its events are stored in the order they
 * were sent, and every spend of its tenant a budget can see is a prefix sum of their costs. Each event
 * costs what the time since the last one is worth at `perSecond` (whatever the faults held up), so the
 * spend crosses an amount at about the same time into the faults on a fast machine or a slow one.
 */
export class AlertDriver {
  readonly events: AlertEvent[] = [];
  /** Why requests had to be retried, and how often. */
  readonly retries = new Map<string, number>();
  private running = false;
  private loop: Promise<void> = Promise.resolve();
  private last = 0;

  constructor(
    private readonly url: () => string,
    private readonly target: AlertTarget,
    private readonly perSecond: Exact,
    /** The fault phase new events are born in. */
    private readonly phase: () => string,
  ) {}

  start(): void {
    this.running = true;
    this.last = Date.now();
    this.loop = this.run();
    // Its failure is stop()'s to report, not an unhandled rejection's.
    this.loop.catch(() => undefined);
  }

  /**
   * Stops after the event in flight is answered; then, if the spend has not reached `atLeast` (a machine
   * too slow for the pace), one last event makes it, so that every amount below it is crossed.
   */
  async stop(atLeast: Exact): Promise<void> {
    this.running = false;
    await this.loop;
    const missing = atLeast.minus(this.total());
    if (missing.gt(0)) await this.send(missing.div(TTS_RATE).ceil().toNumber() + 1);
  }

  total(): Exact {
    return this.events.reduce((sum, event) => sum.plus(event.cost), new Exact(0));
  }

  /** The spend after each event, in the order stored: the only values a budget's `spent` can take. */
  prefixSums(): Exact[] {
    let sum = new Exact(0);
    return this.events.map((event) => (sum = sum.plus(event.cost)));
  }

  private async run(): Promise<void> {
    while (this.running) {
      const now = Date.now();
      const characters = Math.max(
        1,
        this.perSecond
          .times(now - this.last)
          .div(1000)
          .div(TTS_RATE)
          .round()
          .toNumber(),
      );
      this.last = now;
      await this.send(characters);
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
    }
  }

  private async send(characters: number): Promise<void> {
    const event: AlertEvent = {
      id: randomUUID(),
      characters,
      cost: TTS_RATE.times(characters),
      phase: this.phase(),
      sentAt: Date.now(),
      acknowledgedAt: null,
    };
    this.events.push(event);
    const body = JSON.stringify({
      event_id: event.id,
      session_id: this.target.session_id,
      user_id: this.target.user_id,
      provider: 'resemble',
      event_type: 'tts_characters',
      quantity: characters,
    });
    const deadline = Date.now() + GIVE_UP_MS;
    while (event.acknowledgedAt === null) {
      if (Date.now() > deadline) throw new Error(`alert driver: event ${event.id} unanswered for ${GIVE_UP_MS} ms`);
      try {
        const response = await fetch(`${this.url()}/api/usage/events`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        if (response.status === 201) event.acknowledgedAt = Date.now();
        else if (response.status === 422) throw new Error(`alert driver: event refused: ${text}`);
        else this.note(`status ${response.status} ${text.slice(0, 80)}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith('alert driver:')) throw error;
        this.note(
          error instanceof Error
            ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}`
            : String(error),
        );
      }
      if (event.acknowledgedAt === null) await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  private note(reason: string): void {
    this.retries.set(reason, (this.retries.get(reason) ?? 0) + 1);
  }
}
