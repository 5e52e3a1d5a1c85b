import { setMaxListeners } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Context } from 'koa';
import { Lender, withSignal } from '../../shared/abortable.ts';
import { AppError } from '../../shared/errors.ts';
import { eventStreamBody, snapshotMessages, Wakeup, type SnapshotStream } from '../../shared/http/event-stream.ts';
import type { TextBody } from '../../shared/http/text-body.ts';
import type { StoredAnnouncement, StoredAnnouncements } from '../../shared/redis/stored-announcements.ts';

export interface LiveStreamLimits {
  /** Open streams one tenant may hold in this process; past it, 429. */
  readonly perTenant: number;
  /** Open streams one caller that may name any tenant (an unbound key, or a source address in `off`) may hold; past it, 429. */
  readonly perCaller: number;
  /** Open streams of this process, all tenants together; past it, 503. */
  readonly total: number;
  /** Reads of ClickHouse the streams of this process run at once, all streams together. */
  readonly reads: number;
  readonly heartbeatMs: number;
}

/**
 * How long a stream's read waits at most for the requests' reads (see LiveStreams' `busy`): a stored round
 * wakes the streams and releases the requests that waited for it at the same moment, and a stream, which
 * only refreshes a view, should not take the engine's cores from a request (another tenant's, often).
 */
export const STREAM_YIELD_MS = 250;
const STREAM_YIELD_POLL_MS = 5;

/** How long a refused reader is told to wait before it tries again. */
export const STREAM_RETRY_AFTER_SECONDS = 30;

export type StreamRefusal = 'tenant' | 'caller' | 'process';

/** What a stream watches: every batch of a tenant, or the batches that touch one session. */
export type Watched = { readonly tenant: string } | { readonly session: string };

/** The streams of one watched thing, and the one read of its state they share. */
interface Poll {
  readonly wakeups: Set<Wakeup>;
  /** Bumped by every announcement for it: a read begun before the latest may not show it. */
  generation: number;
  inFlight: { readonly generation: number; readonly reading: Promise<unknown> } | null;
  /** Aborted once its last stream is gone: the read nobody waits for any more is cancelled. */
  readonly gone: AbortController;
}

/**
 * The open live streams of this process: each is woken when the consumer announces a stored batch
 * that touches what it watches (services/shared/redis/stored-announcements.ts), and reads its state
 * again then. One subscription per process, whatever the number of streams; the streams of one tenant
 * (or session) share one read of its state, and the reads of all streams together run at most
 * `limits.reads` at a time, so that streams never fill the read connections the cost routes answer on.
 */
export class LiveStreams {
  private readonly polls = new Map<string, Poll>();
  private readonly openPerTenant = new Map<string, number>();
  private readonly openPerCaller = new Map<string, number>();
  private openTotal = 0;
  private readonly unsubscribe: () => void;
  private readonly readSlots: Lender<number>;
  /** Reads of ClickHouse in flight: close() waits for them, so the engine never closes under one. */
  private readonly reading = new Set<Promise<unknown>>();
  private readsRun = 0;
  private readonly refusedBy: Record<StreamRefusal, number> = { tenant: 0, caller: 0, process: 0 };

  /**
   * `busy` says whether a request's read is waiting for the writer or for the engine, or running on it:
   * a stream's read then waits (up to STREAM_YIELD_MS) before it starts. Absent: never.
   */
  constructor(
    announcements: StoredAnnouncements,
    private readonly limits: LiveStreamLimits,
    stopping: AbortSignal,
    private readonly busy: () => boolean = () => false,
  ) {
    this.readSlots = new Lender(Array.from({ length: limits.reads }, (_, i) => i));
    this.unsubscribe = announcements.subscribe((announcement) => this.wake(announcement));
    stopping.addEventListener('abort', () => this.closeAll(), { once: true });
  }

  /**
   * Opens a stream for `tenant` (counted against its cap, `caller`'s when the credential may name any
   * tenant, and the process's), ended when the reader leaves or the process stops.
   */
  open<T>(
    ctx: Context,
    tenant: string,
    caller: string | null,
    watched: Watched,
    stream: Omit<SnapshotStream<T>, 'heartbeatMs' | 'lastEventId'>,
  ): TextBody {
    const clientGone = (ctx.state as { clientGone?: AbortSignal } | undefined)?.clientGone;
    // A reader gone during the awaits before this (rate limit, token check) would never be sent the body:
    // its response's close has fired already, and the stream's own end never runs, so it must not be counted.
    if (clientGone?.aborted) throw clientGone.reason;
    this.admit(tenant, caller);
    const key = watchKey(watched);
    const wakeup = new Wakeup();
    const poll = this.polls.get(key) ?? newPoll();
    poll.wakeups.add(wakeup);
    this.polls.set(key, poll);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      wakeup.close();
      poll.wakeups.delete(wakeup);
      if (poll.wakeups.size === 0 && this.polls.get(key) === poll) {
        this.polls.delete(key);
        poll.gone.abort();
      }
      this.openTotal -= 1;
      count(this.openPerTenant, tenant, -1);
      if (caller !== null) count(this.openPerCaller, caller, -1);
    };
    ctx.res.once('close', release);
    clientGone?.addEventListener('abort', release, { once: true });
    const lastEventId = ctx.get('last-event-id') || undefined;
    const limits = this.limits;
    const read = () => this.sharedRead(poll, stream.read) as Promise<T>;
    return eventStreamBody(async function* () {
      try {
        yield* snapshotMessages({ ...stream, read, heartbeatMs: limits.heartbeatMs, lastEventId }, wakeup);
      } catch (error) {
        // A read cancelled because the reader left ends the stream as the leaving does; others are errors.
        if (!wakeup.isClosed) throw error;
      } finally {
        release();
      }
    });
  }

  /** Open streams of a tenant in this process. */
  openFor(tenant: string): number {
    return this.openPerTenant.get(tenant) ?? 0;
  }

  /** What the metrics show: open streams, refusals by cap, and the reads run and waiting. */
  get stats(): {
    readonly open: number;
    readonly refused: Readonly<Record<StreamRefusal, number>>;
    readonly readsRun: number;
    readonly readsWaiting: number;
  } {
    return {
      open: this.openTotal,
      refused: { ...this.refusedBy },
      readsRun: this.readsRun,
      readsWaiting: this.readSlots.waiting,
    };
  }

  /** Ends every stream, then waits for the reads still in flight. */
  async close(): Promise<void> {
    this.unsubscribe();
    this.closeAll();
    await Promise.allSettled([...this.reading]);
  }

  private admit(tenant: string, caller: string | null): void {
    const { perTenant, perCaller, total } = this.limits;
    const retry = { headers: { 'Retry-After': String(STREAM_RETRY_AFTER_SECONDS) } };
    if ((this.openPerTenant.get(tenant) ?? 0) >= perTenant) {
      this.refusedBy.tenant += 1;
      throw AppError.of(
        'TOO_MANY_REQUESTS',
        `Too many live streams open for this user (${perTenant}): close one, or read the cost routes`,
        retry,
      );
    }
    if (caller !== null && (this.openPerCaller.get(caller) ?? 0) >= perCaller) {
      this.refusedBy.caller += 1;
      throw AppError.of(
        'TOO_MANY_REQUESTS',
        `Too many live streams open for this credential or address (${perCaller}): close one, or read the cost routes`,
        retry,
      );
    }
    if (this.openTotal >= total) {
      this.refusedBy.process += 1;
      throw AppError.of(
        'DEPENDENCY_UNAVAILABLE',
        `This server has as many live streams open as it serves (${total}): try again later`,
        retry,
      );
    }
    this.openTotal += 1;
    count(this.openPerTenant, tenant, 1);
    if (caller !== null) count(this.openPerCaller, caller, 1);
  }

  /**
   * The state of a watched thing, read once for all its streams: a stream joins the read in flight when
   * that read began after the latest announcement for it (so it shows what the stream was woken for),
   * else starts one. The read waits for one of the streams' read slots, and is cancelled, waiting or
   * running, once no stream watches the thing any more.
   */
  private sharedRead(poll: Poll, read: () => Promise<unknown>): Promise<unknown> {
    const current = poll.inFlight;
    if (current !== null && current.generation === poll.generation) return current.reading;
    const signal = poll.gone.signal;
    const reading = this.readSlots.with(signal, async () => {
      await this.yieldToRequests(signal);
      this.readsRun += 1;
      return withSignal(signal, read);
    });
    const entry = { generation: poll.generation, reading };
    poll.inFlight = entry;
    this.reading.add(reading);
    void reading
      .finally(() => {
        this.reading.delete(reading);
        if (poll.inFlight === entry) poll.inFlight = null;
      })
      .catch(() => undefined);
    return reading;
  }

  /** Waits while `busy` says a request's read waits or runs, STREAM_YIELD_MS at most. */
  private async yieldToRequests(signal: AbortSignal): Promise<void> {
    const until = performance.now() + STREAM_YIELD_MS;
    while (!signal.aborted && this.busy() && performance.now() < until) await sleep(STREAM_YIELD_POLL_MS);
  }

  private wake({ tenants, sessions }: StoredAnnouncement): void {
    for (const tenant of tenants) this.notify(watchKey({ tenant }));
    for (const session of sessions) this.notify(watchKey({ session }));
  }

  private notify(key: string): void {
    const poll = this.polls.get(key);
    if (poll === undefined) return;
    poll.generation += 1;
    poll.wakeups.forEach((wakeup) => wakeup.notify());
  }

  /** Ends every stream and cancels the reads they wait for, so that stopping never waits for a queue of them. */
  private closeAll(): void {
    for (const poll of this.polls.values()) {
      poll.wakeups.forEach((wakeup) => wakeup.close());
      poll.gone.abort();
    }
  }
}

function newPoll(): Poll {
  const gone = new AbortController();
  // Each statement of a shared read listens to it while it waits, removing its listener after.
  setMaxListeners(0, gone.signal);
  return { wakeups: new Set(), generation: 0, inFlight: null, gone };
}

function count(counts: Map<string, number>, key: string, by: 1 | -1): void {
  const left = (counts.get(key) ?? 0) + by;
  if (left <= 0) counts.delete(key);
  else counts.set(key, left);
}

function watchKey(watched: Watched): string {
  return 'tenant' in watched ? `tenant\u0000${watched.tenant}` : `session\u0000${watched.session}`;
}

/**
 * Whose streams a request's are counted as beside its tenant's: none for a credential bound to one
 * tenant (the tenant's cap is its cap); an unbound credential by its id; in AUTH_MODE=off, where anyone
 * names any tenant, the client's address: `ctx.ip`, which is the socket's peer, or with TRUST_PROXY the
 * address the proxy put last in X-Forwarded-For (behind a proxy the peer is the proxy, shared by everyone).
 */
export function streamCaller(
  caller: { readonly kind: string; readonly id: string; readonly tenant: string | null },
  ip: string,
): string | null {
  if (caller.tenant !== null) return null;
  return caller.kind === 'anonymous' ? `address ${ip}` : `credential ${caller.kind} ${caller.id}`;
}
