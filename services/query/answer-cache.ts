import { LRUCache } from 'lru-cache';
import { currentSignal, SharedSignal, untilAborted, withSignal } from '../shared/abortable.ts';
import { sentUnchanged } from '../shared/http/send-json.ts';
import type { StoredAnnouncements } from '../shared/redis/stored-announcements.ts';

/** Where a cost view gets an answer: kept from an earlier read of the same stored data, or read now. */
export interface Answers {
  /**
   * The answer to `query` (a key naming the view and every input its answer depends on, "now" included
   * only as far as it matters) for `tenant`, whose stored data is all the answer may depend on.
   */
  answer<T>(tenant: string, query: string, read: () => Promise<T>, reads?: ReadsBeyondTenant): Promise<T>;
}

/** What an answer reads besides the tenant's own data. */
export interface ReadsBeyondTenant {
  /** The agents' own names, whoever owns them: kept only where agents' changes are announced. */
  readonly agents?: boolean;
}

/** No cache: every answer read afresh. */
export const READ_AFRESH: Answers = { answer: (_tenant, _query, read) => read() };

export interface AnswerCacheOptions {
  /** An answer is read again after this long whatever was announced: the bound on an announcement lost unseen. */
  readonly maxAgeMs: number;
  /** At most this many answers' JSON characters are kept, the least recently used dropped first. */
  readonly maxBytes: number;
  /** Whether stored agents are announced (the embedded path: services/consumer/start.ts); if not, answers reading them are not kept. */
  readonly agentsAnnounced: boolean;
  /** The clock of the age (tests). */
  readonly perf?: { now(): number };
}

/** A read under way, and the signal that cancels it once no request waits for it. */
interface UnderWay {
  readonly reading: Promise<unknown>;
  readonly shared: SharedSignal;
}

interface Kept {
  readonly tenant: string;
  readonly value: unknown;
}

/**
 * Each tenant's answers, dropped as soon as a batch touching the tenant is stored (the consumer's
 * announcements: services/shared/redis/stored-announcements.ts), so that no answer is older than the
 * data it could show. A read under way when such a batch is stored is not kept, and later requests do
 * not join it. While announcements could be missed (the subscription not confirmed, its connection
 * down) nothing is kept or shared, and what was kept is dropped when they may have been.
 */
export class AnswerCache implements Answers {
  private readonly kept: LRUCache<string, Kept>;
  /** The keys kept per tenant, so that a tenant's answers are dropped together. */
  private readonly keysOf = new Map<string, Set<string>>();
  /** Per tenant, the reads under way by query: requests for the same answer share one read. */
  private readonly reading = new Map<string, Map<string, UnderWay>>();
  private readonly unsubscribe: readonly (() => void)[];
  private readonly agentsAnnounced: boolean;

  constructor(
    private readonly announcements: StoredAnnouncements,
    { maxAgeMs, maxBytes, agentsAnnounced, perf }: AnswerCacheOptions,
  ) {
    this.agentsAnnounced = agentsAnnounced;
    this.kept = new LRUCache<string, Kept>({
      maxSize: maxBytes,
      sizeCalculation: (kept) => Math.max(1, JSON.stringify(kept.value)?.length ?? 1),
      ttl: maxAgeMs,
      // A clock of its own (tests) is read on every look-up, not once a millisecond.
      ...(perf === undefined ? {} : { perf, ttlResolution: 0 }),
      dispose: (kept, key) => this.forget(kept.tenant, key),
    });
    this.unsubscribe = [
      announcements.subscribe(({ tenants, agents = [] }) => {
        // An agent changes rarely, and its name may show in any tenant's answers.
        if (agents.length > 0) this.dropAll();
        else tenants.forEach((tenant) => this.drop(tenant));
      }),
      announcements.onMissed(() => this.dropAll()),
    ];
  }

  async answer<T>(tenant: string, query: string, read: () => Promise<T>, beyond: ReadsBeyondTenant = {}): Promise<T> {
    if (!this.announcements.listening() || (beyond.agents === true && !this.agentsAnnounced)) return read();
    const key = JSON.stringify([tenant, query]);
    const kept = this.kept.get(key);
    if (kept !== undefined) return kept.value as T;
    const waiter = currentSignal();
    const running = this.reading.get(tenant)?.get(query);
    // A read whose requests have all gone is being cancelled: a new request starts its own.
    if (running !== undefined && !running.shared.signal.aborted) {
      running.shared.join(waiter);
      return untilAborted(running.reading as Promise<T>, waiter);
    }
    // Shared by every request asking the same meanwhile: cancelled only once all of them have gone.
    const shared = new SharedSignal();
    shared.join(waiter);
    const reading = withSignal(shared.signal, read);
    const underWay = this.reading.get(tenant) ?? new Map<string, UnderWay>();
    this.reading.set(tenant, underWay.set(query, { reading, shared }));
    try {
      const value = await untilAborted(reading, waiter);
      // Still this tenant's read under way: no batch of the tenant was stored since it began.
      if (this.reading.get(tenant)?.get(query)?.reading === reading) this.keep(tenant, key, value);
      return value;
    } finally {
      const current = this.reading.get(tenant);
      if (current?.get(query)?.reading === reading) {
        current.delete(query);
        if (current.size === 0) this.reading.delete(tenant);
      }
    }
  }

  /** The tenant's answers, kept and under way: a batch of it was stored. */
  drop(tenant: string): void {
    this.reading.delete(tenant);
    for (const key of [...(this.keysOf.get(tenant) ?? [])]) this.kept.delete(key);
  }

  close(): void {
    for (const unsubscribe of this.unsubscribe) unsubscribe();
    this.dropAll();
  }

  private dropAll(): void {
    this.reading.clear();
    this.kept.clear();
  }

  private keep(tenant: string, key: string, value: unknown): void {
    // Shared by every request that gets it: frozen, so that none can change what the next one reads.
    const frozen = deepFreeze(value);
    if (frozen !== null && typeof frozen === 'object') sentUnchanged(frozen);
    this.kept.set(key, { tenant, value: frozen });
    if (!this.kept.has(key)) return; // larger than the whole cache
    const keys = this.keysOf.get(tenant) ?? new Set<string>();
    this.keysOf.set(tenant, keys.add(key));
  }

  private forget(tenant: string, key: string): void {
    const keys = this.keysOf.get(tenant);
    keys?.delete(key);
    if (keys?.size === 0) this.keysOf.delete(tenant);
  }
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    for (const inner of Object.values(value)) deepFreeze(inner);
    Object.freeze(value);
  }
  return value;
}
