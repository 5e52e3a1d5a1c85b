import { createHash } from 'node:crypto';
import { TextBody } from './text-body.ts';

/**
 * A server-sent event stream of snapshots (text/event-stream), where every message is the whole
 * current state, so a reader that missed some loses nothing by reading the latest.
 *
 * Written here rather than taken from a library: the SSE packages for Koa (koa-sse-stream and the
 * like) keep an unbounded queue per connection and know nothing of snapshots; what is needed is
 * small: a wake-up flag (at most one pending change per connection, however many batches are
 * stored meanwhile: the bounded buffer), a heartbeat, ids, and an end.
 */
export interface SnapshotStream<T> {
  /** The event name of each message (`event:`). */
  readonly event: string;
  /** Reads the current state. */
  read(): Promise<T>;
  /** Whether this state is the last one: it is sent under `finalEvent` and the stream ends. */
  isFinal?(state: T): boolean;
  readonly finalEvent?: string;
  /** The fields of a state that do not make it a new one (e.g. its `as_of`), left out of its id. */
  readonly volatile?: readonly string[];
  readonly heartbeatMs: number;
  /** The Last-Event-ID the reader sent: the state it already has is not sent again. */
  readonly lastEventId?: string;
  /** A state sent under its own event name, once per stream: the first one for which `when` holds. */
  readonly once?: { readonly event: string; when(state: T): boolean };
}

/** Wakes one stream when something it shows may have changed; never holds more than one wake-up. */
export class Wakeup {
  private pending = true; // the first read happens at once
  private closed = false;
  private waiter: (() => void) | null = null;

  notify(): void {
    this.pending = true;
    this.release();
  }

  close(): void {
    this.closed = true;
    this.release();
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Resolves 'change' when notified (also before the call), 'idle' after timeoutMs, 'closed' once closed. */
  async wait(timeoutMs: number): Promise<'change' | 'idle' | 'closed'> {
    if (!this.closed && !this.pending) {
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => this.release(), timeoutMs);
        this.waiter = () => {
          clearTimeout(timer);
          resolve();
        };
      });
    }
    if (this.closed) return 'closed';
    if (!this.pending) return 'idle';
    this.pending = false;
    return 'change';
  }

  private release(): void {
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.();
  }
}

/** The id of a state: a digest of what it shows, so a reader resuming with it is sent only what differs. */
export function stateId(state: unknown, volatile: readonly string[] = []): string {
  const shown =
    state !== null && typeof state === 'object'
      ? Object.fromEntries(Object.entries(state).filter(([key]) => !volatile.includes(key)))
      : state;
  return createHash('sha256').update(JSON.stringify(shown)).digest('base64url').slice(0, 22);
}

export function eventFrame(event: string, id: string, data: unknown): string {
  return `id: ${id}\nevent: ${event}\ndata: ${JSON.stringify(data)}\n\n`;
}

/**
 * The messages of one stream: the current state at once (unless the reader's Last-Event-ID is that
 * state), then each changed state when woken, a heartbeat comment after heartbeatMs of silence, and
 * the end when the wake-up closes (the reader left, the process stops) or a final state was sent.
 * The stream is pulled: a reader that does not keep up holds back the generator, and what changed
 * meanwhile waits as one flag, not as queued messages.
 */
export async function* snapshotMessages<T>(stream: SnapshotStream<T>, wakeup: Wakeup): AsyncGenerator<string> {
  let lastId = stream.lastEventId ?? null;
  let onceSent = false;
  yield 'retry: 2000\n\n';
  for (;;) {
    const woken = await wakeup.wait(stream.heartbeatMs);
    if (woken === 'closed') return;
    if (woken === 'idle') {
      yield ': heartbeat\n\n';
      continue;
    }
    const state = await stream.read();
    const final = stream.isFinal?.(state) === true;
    const id = stateId(state, stream.volatile);
    if (final) {
      yield eventFrame(stream.finalEvent ?? stream.event, id, state);
      return;
    }
    if (!onceSent && stream.once?.when(state) === true) {
      onceSent = true;
      yield eventFrame(stream.once.event, id, state);
    } else if (id !== lastId) yield eventFrame(stream.event, id, state);
    lastId = id;
  }
}

/** The answer of an event-stream route: defineRoute streams it; no proxy should buffer or cache it. */
export function eventStreamBody(messages: () => AsyncIterable<string>): TextBody {
  return new TextBody('text/event-stream; charset=utf-8', messages, {
    'Cache-Control': 'no-cache, no-transform',
    'X-Accel-Buffering': 'no',
  });
}
