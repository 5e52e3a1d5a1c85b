import type { Redis } from 'ioredis';

/** One priced usage event of a call in progress. Money and quantity are exact decimal strings. */
export interface LiveUsageEntry {
  readonly event_id: string;
  readonly provider: string;
  readonly service: string;
  readonly event_type: string;
  readonly unit: string;
  readonly quantity: string;
  readonly cost: string;
}

/**
 * What each call has consumed so far, written by the consumer once the events are stored and read
 * by the cost queries while the call is live. Entries are keyed by event id, so writing an event
 * twice (a replayed batch) leaves one entry: applied exactly once by construction.
 */
export interface LiveUsageStore {
  record(sessionId: string, entries: readonly LiveUsageEntry[]): Promise<void>;
  read(sessionId: string): Promise<LiveUsageEntry[]>;
}

/** Live entries outlast any call; the history in ClickHouse keeps everything after that. */
export const LIVE_USAGE_TTL_SECONDS = 2 * 24 * 3600;

export function liveUsageKey(prefix: string, sessionId: string): string {
  return `${prefix}live-usage:${sessionId}`;
}

export class RedisLiveUsage implements LiveUsageStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async record(sessionId: string, entries: readonly LiveUsageEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const key = liveUsageKey(this.prefix, sessionId);
    const fields = entries.flatMap((entry) => [entry.event_id, JSON.stringify(entry)]);
    await this.redis
      .multi()
      .hset(key, ...fields)
      .expire(key, LIVE_USAGE_TTL_SECONDS)
      .exec();
  }

  async read(sessionId: string): Promise<LiveUsageEntry[]> {
    const values = await this.redis.hvals(liveUsageKey(this.prefix, sessionId));
    return values.map((value) => JSON.parse(value) as LiveUsageEntry);
  }
}

/** The embedded mode's live usage: this process's memory, sessions idle past the TTL swept away. */
export class MemoryLiveUsage implements LiveUsageStore {
  private readonly sessions = new Map<string, { entries: Map<string, LiveUsageEntry>; touched: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  async record(sessionId: string, entries: readonly LiveUsageEntry[]): Promise<void> {
    this.sweep();
    const session = this.sessions.get(sessionId) ?? { entries: new Map(), touched: 0 };
    for (const entry of entries) session.entries.set(entry.event_id, entry);
    session.touched = this.now();
    this.sessions.set(sessionId, session);
  }

  async read(sessionId: string): Promise<LiveUsageEntry[]> {
    return [...(this.sessions.get(sessionId)?.entries.values() ?? [])];
  }

  private sweep(): void {
    const cutoff = this.now() - LIVE_USAGE_TTL_SECONDS * 1000;
    for (const [id, session] of this.sessions) if (session.touched < cutoff) this.sessions.delete(id);
  }
}
