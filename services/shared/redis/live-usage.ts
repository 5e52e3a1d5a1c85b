import type { Redis } from 'ioredis';
import type { UsageEventType } from '../../../schemas/http/usage-event.ts';

/** One priced usage event of a call in progress. Money and quantity are exact decimal strings. */
export interface LiveUsageEntry {
  readonly event_id: string;
  readonly provider: string;
  readonly service: string;
  readonly event_type: UsageEventType;
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

/**
 * The most entries a call keeps in its newer generation. Each is written after its event's insert, so
 * the entries only bridge a read that does not see that insert yet (a lagging replica): the newest are
 * what matter, and a call's whole history would make Redis grow with its length. Past the cap the newer
 * generation becomes the older one (the one before it dropped) and a new one starts, so a call keeps
 * between the cap and twice the cap of its newest entries.
 */
export const LIVE_USAGE_MAX_ENTRIES = 100;

/** The newest `LIVE_USAGE_MAX_ENTRIES` of a batch, one per event id (the last written wins). */
function newest(entries: readonly LiveUsageEntry[]): LiveUsageEntry[] {
  const byId = new Map<string, LiveUsageEntry>();
  for (const entry of entries) {
    byId.delete(entry.event_id);
    byId.set(entry.event_id, entry);
  }
  return [...byId.values()].slice(-LIVE_USAGE_MAX_ENTRIES);
}

/** Both generations, one entry per event id, the newer generation's where both hold one. */
function union(newer: readonly LiveUsageEntry[], older: readonly LiveUsageEntry[]): LiveUsageEntry[] {
  const ids = new Set(newer.map((entry) => entry.event_id));
  return [...newer, ...older.filter((entry) => !ids.has(entry.event_id))];
}

// KEYS[1]: the call's newer hash, KEYS[2]: its older one; ARGV[1]: the TTL, ARGV[2]: the cap, then field,
// value pairs. When the new fields would take the newer hash past the cap, it becomes the older one.
const RECORD_SCRIPT = `
local added = (#ARGV - 2) / 2
local held = redis.call('HLEN', KEYS[1])
if held > 0 and held + added > tonumber(ARGV[2]) then redis.call('RENAME', KEYS[1], KEYS[2]) end
redis.call('HSET', KEYS[1], unpack(ARGV, 3))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return added`;

export function liveUsageKey(prefix: string, sessionId: string): string {
  return `${prefix}live-usage:${sessionId}`;
}

function olderLiveUsageKey(prefix: string, sessionId: string): string {
  return `${prefix}live-usage-older:${sessionId}`;
}

export class RedisLiveUsage implements LiveUsageStore {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async record(sessionId: string, entries: readonly LiveUsageEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const keys = [liveUsageKey(this.prefix, sessionId), olderLiveUsageKey(this.prefix, sessionId)];
    const fields = newest(entries).flatMap((entry) => [entry.event_id, JSON.stringify(entry)]);
    await this.redis.eval(RECORD_SCRIPT, 2, ...keys, LIVE_USAGE_TTL_SECONDS, LIVE_USAGE_MAX_ENTRIES, ...fields);
  }

  async read(sessionId: string): Promise<LiveUsageEntry[]> {
    const [newer, older] = await Promise.all([
      this.redis.hvals(liveUsageKey(this.prefix, sessionId)),
      this.redis.hvals(olderLiveUsageKey(this.prefix, sessionId)),
    ]);
    const parse = (values: string[]) => values.map((value) => JSON.parse(value) as LiveUsageEntry);
    return union(parse(newer), parse(older));
  }
}

/** The embedded mode's live usage: this process's memory, sessions idle past the TTL swept away. */
export class MemoryLiveUsage implements LiveUsageStore {
  private readonly sessions = new Map<
    string,
    { entries: Map<string, LiveUsageEntry>; older: Map<string, LiveUsageEntry>; touched: number }
  >();

  constructor(private readonly now: () => number = Date.now) {}

  async record(sessionId: string, entries: readonly LiveUsageEntry[]): Promise<void> {
    this.sweep();
    const session = this.sessions.get(sessionId) ?? { entries: new Map(), older: new Map(), touched: 0 };
    const added = newest(entries);
    if (session.entries.size > 0 && session.entries.size + added.length > LIVE_USAGE_MAX_ENTRIES) {
      session.older = session.entries;
      session.entries = new Map();
    }
    for (const entry of added) session.entries.set(entry.event_id, entry);
    session.touched = this.now();
    this.sessions.set(sessionId, session);
  }

  async read(sessionId: string): Promise<LiveUsageEntry[]> {
    const session = this.sessions.get(sessionId);
    return session === undefined ? [] : union([...session.entries.values()], [...session.older.values()]);
  }

  private sweep(): void {
    const cutoff = this.now() - LIVE_USAGE_TTL_SECONDS * 1000;
    for (const [id, session] of this.sessions) if (session.touched < cutoff) this.sessions.delete(id);
  }
}
