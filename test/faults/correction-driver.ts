import { Exact } from '../../services/shared/exact-decimal.ts';
import { TTS_RATE, type LoadDriver, type SentEvent } from './load-driver.ts';

/** A void or an amend the driver made, with the event's cost once it holds. */
export interface MadeCorrection {
  readonly kind: 'void' | 'amend';
  readonly cost: Exact;
  /** The correction's answer arrived (a 201, or the answer a retry of an answered one gets). */
  settled: boolean;
}

const RETRY_MS = 300;
/** Characters an amend adds to the event's: never its own count, so an amend always changes it. */
const AMEND_ADDS = 1_000;

/**
 * Corrects acknowledged events of a running load the way finance would through the faults: voids and
 * amends, each retried until it has its answer. A retry of a correction whose answer was lost finds it
 * made (a void: 409 "voided already"; an amend to the same quantity: 409 "has these values already"), which
 * settles it; "not stored yet", "being made", a 404 of an event not stored yet, a 5xx and a refused
 * connection are retried.
 */
export class CorrectionDriver {
  readonly made = new Map<string, MadeCorrection>();
  /** Why requests were retried, and how often (printed beside the phase table). */
  readonly retries = new Map<string, number>();
  private running = false;
  private workers: Promise<void>[] = [];
  private turn = 0;

  constructor(
    private readonly url: () => string,
    private readonly load: LoadDriver,
    private readonly user: string,
    private readonly concurrency = 2,
    private readonly pauseMs = 250,
  ) {}

  start(): void {
    this.running = true;
    this.workers = Array.from({ length: this.concurrency }, () => this.work());
  }

  /** Stops choosing events and waits until the corrections begun have their answers. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  /** The event's cost as its corrections leave it. */
  costOf(event: SentEvent): Exact {
    return this.made.get(event.id)?.cost ?? event.cost;
  }

  private async work(): Promise<void> {
    while (this.running) {
      const event = this.pick();
      if (event !== undefined) {
        const kind = this.turn++ % 3 === 0 ? 'amend' : 'void';
        await this.correct(event, kind);
      }
      await new Promise((resolve) => setTimeout(resolve, this.pauseMs));
    }
  }

  /** An acknowledged, valid event not corrected yet, from the older half of those sent. */
  private pick(): SentEvent | undefined {
    const events = [...this.load.events.values()];
    const older = events.slice(0, Math.floor(events.length / 2));
    const open = older.filter((event) => event.acknowledged && !event.invalid && !this.made.has(event.id));
    return open[Math.floor(Math.random() * open.length)];
  }

  private async correct(event: SentEvent, kind: 'void' | 'amend'): Promise<void> {
    const characters = event.cost.div(TTS_RATE).toNumber() + AMEND_ADDS;
    const made: MadeCorrection = {
      kind,
      cost: kind === 'void' ? new Exact(0) : TTS_RATE.times(characters),
      settled: false,
    };
    this.made.set(event.id, made);
    const body =
      kind === 'void' ? { reason: 'fault suite void' } : { reason: 'fault suite amend', quantity: characters };
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      try {
        const response = await fetch(`${this.url()}/api/usage/events/${event.id}/${kind}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-user-id': this.user },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        const madeBefore =
          (kind === 'void' && response.status === 409 && text.includes('was voided already')) ||
          (kind === 'amend' && response.status === 409 && text.includes('has these values already'));
        if (response.status === 201 || madeBefore) {
          made.settled = true;
          return;
        }
        const retried =
          response.status >= 500 || response.status === 404 || (response.status === 409 && text.includes('retry'));
        if (!retried) throw new Error(`${kind} of ${event.id}: ${response.status} ${text}`);
        this.note(`${response.status} ${text.replace(/[0-9a-f-]{36}/g, '<id>').slice(0, 90)}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith(`${kind} of `)) throw error;
        this.note(error instanceof Error ? error.message : String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
  }

  private note(reason: string): void {
    this.retries.set(reason, (this.retries.get(reason) ?? 0) + 1);
  }
}
