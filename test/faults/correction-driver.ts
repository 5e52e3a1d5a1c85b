import { Exact } from '../../services/shared/exact-decimal.ts';
import { TTS_RATE, type LoadDriver, type SentEvent } from './load-driver.ts';

/** A void or an amend the driver made, with the event's cost once it holds. */
export interface MadeCorrection {
  readonly kind: 'void' | 'amend';
  readonly cost: Exact;
  /** Clients sending it at once (2: raced, each retrying until answered). */
  readonly clients: number;
  /** Every client's answer arrived (a 201, or the answer a retry of an answered one gets). */
  settled: boolean;
  /** The 201s its clients got: more than one is a correction made twice. */
  created: number;
}

export interface CorrectionDriverOptions {
  /** Corrections made at once. */
  readonly concurrency?: number;
  /** Between two corrections of one worker. */
  readonly pauseMs?: number;
  /** Every this many corrections, one is sent by two clients at once (0: never). */
  readonly raceEvery?: number;
}

const RETRY_MS = 300;
/** Characters an amend adds to the event's: never its own count, so an amend always changes it. */
const AMEND_ADDS = 1_000;

/**
 * Corrects acknowledged events of a running load the way finance would through the faults: voids and
 * amends, each retried until it has its answer. A retry of a correction whose answer was lost finds it
 * made (a void: 409 "voided already"; an amend to the same quantity: 409 "has these values already"), which
 * settles it; "not stored yet", "being made", a 404 of an event not stored yet, a 5xx and a refused
 * connection are retried. A raced correction is sent by two clients at once, each retrying on its own:
 * one makes it, the other must find it made (or being made, and retry until it does).
 */
export class CorrectionDriver {
  readonly made = new Map<string, MadeCorrection>();
  /** Why requests were retried, and how often (printed beside the phase table). */
  readonly retries = new Map<string, number>();
  private running = false;
  private workers: Promise<void>[] = [];
  private turn = 0;
  private readonly concurrency: number;
  private readonly pauseMs: number;
  private readonly raceEvery: number;

  /**
   * `url(turn)`: where a request goes; `turn` is the request's count among its client's tries plus the
   * client's index, so a retry, and a raced correction's other client, get the next turn.
   */
  constructor(
    private readonly url: (turn: number) => string,
    private readonly load: LoadDriver,
    private readonly user: string,
    { concurrency = 2, pauseMs = 250, raceEvery = 0 }: CorrectionDriverOptions = {},
  ) {
    this.concurrency = concurrency;
    this.pauseMs = pauseMs;
    this.raceEvery = raceEvery;
  }

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
        const turn = this.turn++;
        const clients = this.raceEvery > 0 && turn % this.raceEvery === 0 ? 2 : 1;
        await this.correct(event, turn % 3 === 0 ? 'amend' : 'void', clients);
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

  private async correct(event: SentEvent, kind: 'void' | 'amend', clients: number): Promise<void> {
    const characters = event.cost.div(TTS_RATE).toNumber() + AMEND_ADDS;
    const made: MadeCorrection = {
      kind,
      cost: kind === 'void' ? new Exact(0) : TTS_RATE.times(characters),
      clients,
      settled: false,
      created: 0,
    };
    this.made.set(event.id, made);
    const body =
      kind === 'void' ? { reason: 'fault suite void' } : { reason: 'fault suite amend', quantity: characters };
    const answers = await Promise.all(
      Array.from({ length: clients }, (_, client) => this.sendUntilAnswered(event.id, kind, body, client)),
    );
    made.created = answers.filter((status) => status === 201).length;
    made.settled = answers.every((status) => status !== null);
  }

  /** One client's tries of a correction: its answer's status (201 or 409 made already), null when none came. */
  private async sendUntilAnswered(
    eventId: string,
    kind: 'void' | 'amend',
    body: object,
    client: number,
  ): Promise<number | null> {
    const deadline = Date.now() + 180_000;
    for (let attempt = 0; Date.now() < deadline; attempt += 1) {
      try {
        const response = await fetch(`${this.url(attempt + client)}/api/usage/events/${eventId}/${kind}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-user-id': this.user },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        const madeBefore =
          (kind === 'void' && response.status === 409 && text.includes('was voided already')) ||
          (kind === 'amend' && response.status === 409 && text.includes('has these values already'));
        if (response.status === 201 || madeBefore) return response.status;
        const retried =
          response.status >= 500 || response.status === 404 || (response.status === 409 && text.includes('retry'));
        if (!retried) throw new Error(`${kind} of ${eventId}: ${response.status} ${text}`);
        this.note(`${response.status} ${text.replace(/[0-9a-f-]{36}/g, '<id>').slice(0, 90)}`);
      } catch (error) {
        if (error instanceof Error && error.message.startsWith(`${kind} of `)) throw error;
        this.note(error instanceof Error ? error.message : String(error));
      }
      await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
    }
    return null;
  }

  private note(reason: string): void {
    this.retries.set(reason, (this.retries.get(reason) ?? 0) + 1);
  }
}
