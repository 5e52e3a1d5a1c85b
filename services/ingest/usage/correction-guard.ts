import { randomUUID } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import type { Redis } from '../../shared/redis/client.ts';
import { unavailableOnError } from '../../shared/redis/redis-script.ts';
import { releaseLockScript } from '../sessions/session-scripts.ts';
import { changeQueue } from '../shared/keyed-queue.ts';
import { createIngestRedisKeys } from '../shared/redis-keys.ts';

/** One stored usage event of a tenant, as the guard names it. */
export interface GuardedEvent {
  readonly userId: string;
  readonly eventId: string;
}

/**
 * How corrections of one usage event keep out of each other's way (usage-corrections.ts, and a
 * repricing's of many events, rates/reprice.ts): each holds its events while it reads their rows and
 * publishes, and the next one learns which correction was published last for an event, to wait until
 * that one is stored before it reads.
 */
export interface CorrectionGuard {
  /** Runs `work` while no other correction of the event runs (those of this process wait their turn); else a 409. */
  hold<T>(userId: string, eventId: string, work: () => Promise<T>): Promise<T>;
  /** Runs `work` while holding every one of these events; a 409 when another correction holds any. */
  holdAll<T>(events: readonly GuardedEvent[], work: () => Promise<T>): Promise<T>;
  /** The correction last published for each event (by guardKey), while it may still be unstored. */
  previous(events: readonly GuardedEvent[]): Promise<Map<string, string>>;
  published(corrections: readonly (GuardedEvent & { readonly correctionId: string })[]): Promise<void>;
}

/** Longer than any correction's read and publish; a holder that dies frees the event this much later. */
const LOCK_TTL_MS = 60_000;
/** Far longer than a correction takes to be stored while the writer works; then the stored rows say it alone. */
const LAST_TTL_MS = 3_600_000;
/** Keys per Redis round of a repricing's many events. */
const KEYS_PER_ROUND = 1_000;

export const guardKey = ({ userId, eventId }: GuardedEvent) => `${eventId}:${userId}`;

const busy = (eventId: string) =>
  AppError.of('CONFLICT', `Another correction of usage event ${eventId} is being made: retry`, {
    headers: { 'Retry-After': '1' },
  });

/** One process (the embedded mode, or ingest without Redis): corrections of one event run in turn. */
export class MemoryCorrectionGuard implements CorrectionGuard {
  private readonly queue = changeQueue(() => 'usage event');
  private readonly held = new Set<string>();
  private readonly last = new Map<string, { readonly id: string; readonly until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  hold<T>(userId: string, eventId: string, work: () => Promise<T>): Promise<T> {
    return this.queue.run(guardKey({ userId, eventId }), () => this.holdAll([{ userId, eventId }], work));
  }

  async holdAll<T>(events: readonly GuardedEvent[], work: () => Promise<T>): Promise<T> {
    const keys = [...new Set(events.map(guardKey))];
    const taken = events.find((event) => this.held.has(guardKey(event)));
    if (taken !== undefined) throw busy(taken.eventId);
    for (const name of keys) this.held.add(name);
    try {
      return await work();
    } finally {
      for (const name of keys) this.held.delete(name);
    }
  }

  async previous(events: readonly GuardedEvent[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (const event of events) {
      const kept = this.last.get(guardKey(event));
      if (kept !== undefined && kept.until > this.now()) found.set(guardKey(event), kept.id);
    }
    return found;
  }

  async published(corrections: readonly (GuardedEvent & { readonly correctionId: string })[]): Promise<void> {
    for (const [name, { until }] of this.last) if (until <= this.now()) this.last.delete(name);
    for (const correction of corrections)
      this.last.set(guardKey(correction), { id: correction.correctionId, until: this.now() + LAST_TTL_MS });
  }
}

/** Every ingest process: a lock key per event set with NX and a TTL, released by its own token only, and the last id beside it. */
export class RedisCorrectionGuard implements CorrectionGuard {
  private readonly keys;
  private readonly local = new MemoryCorrectionGuard();

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = createIngestRedisKeys(prefix);
  }

  hold<T>(userId: string, eventId: string, work: () => Promise<T>): Promise<T> {
    // Corrections from this process queue in memory first; only another process's meets the locks.
    return this.local.hold(userId, eventId, () => this.locked([{ userId, eventId }], work));
  }

  holdAll<T>(events: readonly GuardedEvent[], work: () => Promise<T>): Promise<T> {
    return this.local.holdAll(events, () => this.locked(events, work));
  }

  async previous(events: readonly GuardedEvent[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    for (let start = 0; start < events.length; start += KEYS_PER_ROUND) {
      const part = events.slice(start, start + KEYS_PER_ROUND);
      const ids = await redisCall(() =>
        this.redis.mget(part.map(({ userId, eventId }) => this.keys.correctionLast(userId, eventId))),
      );
      part.forEach((event, i) => {
        if (ids[i] !== null && ids[i] !== undefined) found.set(guardKey(event), ids[i]!);
      });
    }
    return found;
  }

  async published(corrections: readonly (GuardedEvent & { readonly correctionId: string })[]): Promise<void> {
    for (let start = 0; start < corrections.length; start += KEYS_PER_ROUND) {
      const pipeline = this.redis.pipeline();
      for (const { userId, eventId, correctionId } of corrections.slice(start, start + KEYS_PER_ROUND))
        pipeline.set(this.keys.correctionLast(userId, eventId), correctionId, 'PX', LAST_TTL_MS);
      const failed = ((await redisCall(() => pipeline.exec())) ?? []).find(([error]) => error !== null);
      if (failed !== undefined) await redisCall(() => Promise.reject(failed[0]));
    }
  }

  /** `work` under every event's lock key; the keys taken are let go whether it succeeds or not. */
  private async locked<T>(events: readonly GuardedEvent[], work: () => Promise<T>): Promise<T> {
    const token = randomUUID();
    const locks = events.map(({ userId, eventId }) => this.keys.correctionLock(userId, eventId));
    const taken: string[] = [];
    // A release that fails leaves the keys to their TTL: corrections of those events wait, none is wrong.
    const release = async () => {
      for (let start = 0; start < taken.length; start += KEYS_PER_ROUND)
        await Promise.all(
          taken
            .slice(start, start + KEYS_PER_ROUND)
            .map((lock) => releaseLockScript.run(this.redis, [lock], [token]).catch(() => undefined)),
        );
    };
    try {
      for (let start = 0; start < locks.length; start += KEYS_PER_ROUND) {
        const part = locks.slice(start, start + KEYS_PER_ROUND);
        const pipeline = this.redis.pipeline();
        for (const lock of part) pipeline.set(lock, token, 'PX', LOCK_TTL_MS, 'NX');
        const answers = (await redisCall(() => pipeline.exec())) ?? [];
        part.forEach((lock, i) => {
          if (answers[i]?.[1] === 'OK') taken.push(lock);
        });
        // A command Redis refused (out of memory, read-only) is Redis not answering; a key held is another correction.
        const failed = answers.find(([error]) => error !== null);
        if (failed !== undefined) await redisCall(() => Promise.reject(failed[0]));
        const refused = part.findIndex((_, i) => answers[i]?.[1] !== 'OK');
        if (refused !== -1) throw busy(events[start + refused]!.eventId);
      }
      return await work();
    } finally {
      await release();
    }
  }
}

/** A Redis call of the guard: Redis not answering is a 503 to retry, never a 500. */
function redisCall<T>(call: () => Promise<T>): Promise<T> {
  return unavailableOnError('Corrections store', call);
}
