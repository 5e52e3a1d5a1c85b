import { randomUUID } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import type { Redis } from '../../shared/redis/client.ts';
import { releaseLockScript } from '../sessions/session-scripts.ts';
import { changeQueue } from '../shared/keyed-queue.ts';
import { createIngestRedisKeys } from '../shared/redis-keys.ts';

/**
 * How a correction of one usage event keeps out of another's way (usage-corrections.ts): it holds the
 * event while it reads the event's rows and publishes, and the next one learns which correction was
 * published last, to wait until that one is stored before it reads.
 */
export interface CorrectionGuard {
  /** Runs `work` while no other correction of the event runs; a 409 when another process holds it. */
  hold<T>(userId: string, eventId: string, work: () => Promise<T>): Promise<T>;
  /** The correction last published for the event, while it may still be unstored; null when none. */
  previous(userId: string, eventId: string): Promise<string | null>;
  published(userId: string, eventId: string, correctionId: string): Promise<void>;
}

/** Longer than any correction's read and publish; a holder that dies frees the event this much later. */
const LOCK_TTL_MS = 15_000;
/** Far longer than a correction takes to be stored while the writer works; then the stored rows say it alone. */
const LAST_TTL_MS = 3_600_000;

const key = (userId: string, eventId: string) => `${eventId}:${userId}`;

/** One process (the embedded mode, or ingest without Redis): corrections of one event run in turn. */
export class MemoryCorrectionGuard implements CorrectionGuard {
  private readonly queue = changeQueue(() => 'usage event');
  private readonly last = new Map<string, { readonly id: string; readonly until: number }>();

  constructor(private readonly now: () => number = Date.now) {}

  hold<T>(userId: string, eventId: string, work: () => Promise<T>): Promise<T> {
    return this.queue.run(key(userId, eventId), work);
  }

  async previous(userId: string, eventId: string): Promise<string | null> {
    const kept = this.last.get(key(userId, eventId));
    if (kept === undefined) return null;
    if (kept.until > this.now()) return kept.id;
    this.last.delete(key(userId, eventId));
    return null;
  }

  async published(userId: string, eventId: string, correctionId: string): Promise<void> {
    for (const [name, { until }] of this.last) if (until <= this.now()) this.last.delete(name);
    this.last.set(key(userId, eventId), { id: correctionId, until: this.now() + LAST_TTL_MS });
  }
}

/** Every ingest process: a lock key set with NX and a TTL, released by its own token only, and the last id beside it. */
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
    // Corrections from this process queue in memory first; only another process's meets the lock.
    return this.local.hold(userId, eventId, async () => {
      const lock = this.keys.correctionLock(userId, eventId);
      const token = randomUUID();
      if ((await this.redis.set(lock, token, 'PX', LOCK_TTL_MS, 'NX')) !== 'OK')
        throw AppError.of('CONFLICT', `Another correction of usage event ${eventId} is being made: retry`, {
          headers: { 'Retry-After': '1' },
        });
      try {
        return await work();
      } finally {
        // A release that fails leaves the key to its TTL: corrections of the event wait, none is wrong.
        await releaseLockScript.run(this.redis, [lock], [token]).catch(() => undefined);
      }
    });
  }

  previous(userId: string, eventId: string): Promise<string | null> {
    return this.redis.get(this.keys.correctionLast(userId, eventId));
  }

  async published(userId: string, eventId: string, correctionId: string): Promise<void> {
    await this.redis.set(this.keys.correctionLast(userId, eventId), correctionId, 'PX', LAST_TTL_MS);
  }
}
