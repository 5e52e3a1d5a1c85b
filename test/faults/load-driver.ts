import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import { call } from '../support/api.ts';
import { Exact } from '../../services/shared/exact-decimal.ts';

export interface DriverSession {
  readonly id: string;
  readonly user_id: string;
  readonly agent_id: string | null;
}

export interface SentEvent {
  readonly id: string;
  readonly phase: string;
  readonly session: number;
  readonly cost: Exact;
  /** An invalid event (a negative quantity): must be refused and never stored. */
  readonly invalid: boolean;
  acknowledged: boolean;
  refused: boolean;
}

export const TTS_RATE = new Exact('0.00004');
const RETRY_MS = 250;

/**
 * Sends usage events the way a fleet of workers would, with known costs: batches and single events
 * from several concurrent clients, each retried with the same event ids until the API answers
 * (503, 5xx, a reset or refused connection are retried; an acknowledgement is final), and some
 * already acknowledged events resent on purpose. Every event remembers the fault phase it was born in.
 */
export class LoadDriver {
  readonly events = new Map<string, SentEvent>();
  /** Why requests had to be retried, and how often: the suite prints it beside its table. */
  readonly retries = new Map<string, number>();
  phase = 'none';
  private running = false;
  private workers: Promise<void>[] = [];
  private counter = 0;

  constructor(
    private readonly url: () => string,
    private readonly sessions: readonly DriverSession[],
    private readonly concurrency = 6,
  ) {}

  start(): void {
    this.running = true;
    this.workers = Array.from({ length: this.concurrency }, (_, worker) => this.work(worker));
  }

  /** Stops making new events and waits until every one sent so far has a final answer. */
  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.workers);
  }

  private async work(worker: number): Promise<void> {
    while (this.running) {
      const single = (this.counter++ + worker) % 4 === 0;
      const fresh = Array.from({ length: single ? 1 : 20 }, () => this.makeEvent());
      const resent = single ? [] : this.someAcknowledged(3);
      await this.sendUntilAnswered(fresh, resent, single);
    }
  }

  private makeEvent(): { body: Record<string, unknown>; event: SentEvent } {
    const n = this.events.size;
    const session = n % this.sessions.length;
    const target = this.sessions[session]!;
    const invalid = n % 50 === 49;
    const characters = 1 + (n % 997);
    const event: SentEvent = {
      id: randomUUID(),
      phase: this.phase,
      session,
      cost: invalid ? new Exact(0) : TTS_RATE.times(characters),
      invalid,
      acknowledged: false,
      refused: false,
    };
    this.events.set(event.id, event);
    const body = {
      event_id: event.id,
      session_id: target.id,
      user_id: target.user_id,
      provider: 'resemble',
      event_type: 'tts_characters',
      quantity: invalid ? -1 : characters,
    };
    return { body, event };
  }

  private someAcknowledged(count: number): { body: Record<string, unknown>; event: SentEvent }[] {
    const acknowledged = [...this.events.values()]
      .slice(-400)
      .filter((event) => event.acknowledged && !event.invalid)
      .slice(0, count);
    return acknowledged.map((event) => {
      const target = this.sessions[event.session]!;
      return {
        event,
        body: {
          event_id: event.id,
          session_id: target.id,
          user_id: target.user_id,
          provider: 'resemble',
          event_type: 'tts_characters',
          quantity: event.cost.div(TTS_RATE).toNumber(),
        },
      };
    });
  }

  private async sendUntilAnswered(
    fresh: { body: Record<string, unknown>; event: SentEvent }[],
    resent: { body: Record<string, unknown> }[],
    single: boolean,
  ): Promise<void> {
    const deadline = Date.now() + 180_000;
    while (Date.now() < deadline) {
      try {
        const path = single ? '/api/usage/events' : '/api/usage/events/batch';
        const body = single ? fresh[0]!.body : [...fresh.map((f) => f.body), ...resent.map((r) => r.body)];
        const response = await fetch(`${this.url()}${path}`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        if (response.status >= 500)
          throw new Error(`status ${response.status} ${text.replace(/"request_id":"[^"]*"/, '').slice(0, 80)}`);
        if (single) {
          fresh[0]!.event.acknowledged = response.status === 201;
          fresh[0]!.event.refused = response.status !== 201;
        } else {
          const items = JSON.parse(text) as { index: number; status: string }[];
          fresh.forEach(({ event }, index) => {
            event.acknowledged = items[index]?.status === 'accepted' || items[index]?.status === 'duplicate';
            event.refused = !event.acknowledged;
          });
        }
        return;
      } catch (error) {
        const reason =
          error instanceof Error
            ? `${error.message}${error.cause instanceof Error ? `: ${error.cause.message}` : ''}`
            : String(error);
        this.retries.set(reason, (this.retries.get(reason) ?? 0) + 1);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }
}

/** The sessions a load goes to: `count` calls of `user`, one in six without an agent, five agents for the rest. */
export async function createDriverSessions(url: string, user: string, count: number): Promise<DriverSession[]> {
  const sessions: DriverSession[] = [];
  for (let i = 0; i < count; i += 1) {
    const agent_id = i % 6 === 5 ? null : `agent-${i % 5}`;
    const created = await call<{ id: string }>(url, 'POST', '/api/sessions/', {
      room_name: `room-${randomUUID()}`,
      user_id: user,
      agent_id,
    });
    expect(created.status).toBe(201);
    sessions.push({ id: created.body.id, user_id: user, agent_id });
  }
  return sessions;
}

/** A fault phase of a running load: its new events are marked with `name`, and it settles 2 s after the fault. */
export async function inPhase(driver: LoadDriver, name: string, fault: () => Promise<unknown>): Promise<void> {
  driver.phase = name;
  await fault();
  await new Promise((resolve) => setTimeout(resolve, 2_000));
}
