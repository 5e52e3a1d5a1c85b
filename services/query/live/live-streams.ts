import type { Context } from 'koa';
import { AppError } from '../../shared/errors.ts';
import { eventStreamBody, snapshotMessages, Wakeup, type SnapshotStream } from '../../shared/http/event-stream.ts';
import type { TextBody } from '../../shared/http/text-body.ts';
import type { StoredAnnouncement, StoredAnnouncements } from '../../shared/redis/stored-announcements.ts';

export interface LiveStreamLimits {
  /** Open streams one tenant may hold in this process; past it, 429. */
  readonly perTenant: number;
  readonly heartbeatMs: number;
}

/** What a stream watches: every batch of a tenant, or the batches that touch one session. */
export type Watched = { readonly tenant: string } | { readonly session: string };

/**
 * The open live streams of this process: each is woken when the consumer announces a stored batch
 * that touches what it watches (services/shared/redis/stored-announcements.ts), and reads its state
 * again then. One subscription per process, whatever the number of streams.
 */
export class LiveStreams {
  private readonly watchers = new Map<string, Set<Wakeup>>();
  private readonly openPerTenant = new Map<string, number>();
  private readonly unsubscribe: () => void;
  /** Reads of ClickHouse in flight: close() waits for them, so the engine never closes under one. */
  private readonly reading = new Set<Promise<unknown>>();

  constructor(
    announcements: StoredAnnouncements,
    private readonly limits: LiveStreamLimits,
    stopping: AbortSignal,
  ) {
    this.unsubscribe = announcements.subscribe((announcement) => this.wake(announcement));
    stopping.addEventListener('abort', () => this.closeAll(), { once: true });
  }

  /** Opens a stream for `tenant` (counted against its cap), ended when the reader leaves or the process stops. */
  open<T>(
    ctx: Context,
    tenant: string,
    watched: Watched,
    stream: Omit<SnapshotStream<T>, 'heartbeatMs' | 'lastEventId'>,
  ): TextBody {
    const open = this.openPerTenant.get(tenant) ?? 0;
    if (open >= this.limits.perTenant)
      throw AppError.of(
        'TOO_MANY_REQUESTS',
        `Too many live streams open for this user (${this.limits.perTenant}): close one, or read the cost routes`,
      );
    this.openPerTenant.set(tenant, open + 1);
    const key = watchKey(watched);
    const wakeup = new Wakeup();
    const watching = this.watchers.get(key) ?? new Set<Wakeup>();
    watching.add(wakeup);
    this.watchers.set(key, watching);
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      wakeup.close();
      watching.delete(wakeup);
      if (watching.size === 0 && this.watchers.get(key) === watching) this.watchers.delete(key);
      const left = (this.openPerTenant.get(tenant) ?? 1) - 1;
      if (left === 0) this.openPerTenant.delete(tenant);
      else this.openPerTenant.set(tenant, left);
    };
    ctx.res.once('close', release);
    const lastEventId = ctx.get('last-event-id') || undefined;
    const limits = this.limits;
    const read = () => {
      const reading = stream.read();
      this.reading.add(reading);
      void reading.finally(() => this.reading.delete(reading)).catch(() => undefined);
      return reading;
    };
    return eventStreamBody(async function* () {
      try {
        yield* snapshotMessages({ ...stream, read, heartbeatMs: limits.heartbeatMs, lastEventId }, wakeup);
      } finally {
        release();
      }
    });
  }

  /** Open streams of a tenant in this process. */
  openFor(tenant: string): number {
    return this.openPerTenant.get(tenant) ?? 0;
  }

  /** Ends every stream, then waits for the reads still in flight. */
  async close(): Promise<void> {
    this.unsubscribe();
    this.closeAll();
    await Promise.allSettled([...this.reading]);
  }

  private wake({ tenants, sessions }: StoredAnnouncement): void {
    for (const tenant of tenants) this.watchers.get(watchKey({ tenant }))?.forEach((wakeup) => wakeup.notify());
    for (const session of sessions) this.watchers.get(watchKey({ session }))?.forEach((wakeup) => wakeup.notify());
  }

  private closeAll(): void {
    for (const watching of this.watchers.values()) watching.forEach((wakeup) => wakeup.close());
  }
}

function watchKey(watched: Watched): string {
  return 'tenant' in watched ? `tenant\u0000${watched.tenant}` : `session\u0000${watched.session}`;
}
