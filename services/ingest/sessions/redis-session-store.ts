import { randomUUID } from 'node:crypto';
import { AppError } from '../../shared/errors.ts';
import { jitteredDelay, retry, waitUntil } from '../../shared/retry.ts';
import type { Redis } from '../../shared/redis/client.ts';
import { KeyedQueue, roomQueue } from '../shared/keyed-queue.ts';
import { unavailableOnError } from '../../shared/redis/redis-script.ts';
import { createIngestRedisKeys, type IngestRedisKeys } from '../shared/redis-keys.ts';
import type { Session } from './session.ts';
import {
  anyTenantRoomScript,
  createSessionScript,
  listSessionsScript,
  releaseLockScript,
  tenantRoomScript,
  updateSessionScript,
} from './session-scripts.ts';
import {
  liveRetentionMs,
  reviseSession,
  roomOfSeveralTenants,
  type SessionListQuery,
  type SessionMutation,
  type SessionPage,
  type SessionStore,
  type SessionStoreOptions,
  type SessionUpdateOutcome,
} from './session-store.ts';

export interface RedisSessionStoreOptions extends SessionStoreOptions {
  /** Compare-and-set attempts of one update before giving up with DEPENDENCY_UNAVAILABLE. */
  readonly maxAttempts?: number;
  /** How long a room's lock outlives a holder that never releases it (a process that died). */
  readonly roomLockTtlMs?: number;
  /** How long a create waits for its room's lock before giving up with DEPENDENCY_UNAVAILABLE. */
  readonly roomLockWaitMs?: number;
}

/**
 * Sessions shared by every ingest process. Each session is one hash { version, session JSON };
 * an update reads it, applies the mutation in this process, and writes back with a Lua
 * compare-and-set on `version`, retrying when another process wrote first.
 */
export class RedisSessionStore implements SessionStore {
  private readonly keys: IngestRedisKeys;
  private readonly retention: SessionStoreOptions;
  private readonly maxAttempts: number;
  private readonly queue = new KeyedQueue();
  private readonly rooms = roomQueue();
  private readonly roomLockTtlMs: number;
  private readonly roomLockWaitMs: number;

  constructor(
    private readonly redis: Redis,
    keyPrefix: string,
    options: RedisSessionStoreOptions = {},
  ) {
    this.keys = createIngestRedisKeys(keyPrefix);
    this.retention = options;
    this.maxAttempts = options.maxAttempts ?? 20;
    // Above the longest a create holds it: one record sent to the broker (its send times out first).
    this.roomLockTtlMs = options.roomLockTtlMs ?? 30_000;
    this.roomLockWaitMs = options.roomLockWaitMs ?? 10_000;
  }

  async create(session: Session): Promise<void> {
    const keys = [
      this.keys.session(session.id),
      this.keys.roomLatest(session.room_name),
      this.keys.tenantRoomLatest(session.user_id, session.room_name),
      this.keys.userSessions(session.user_id),
      this.keys.userExpiring(session.user_id),
      this.keys.roomTenants(session.room_name),
    ];
    const args = [
      session.id,
      session.version,
      JSON.stringify(session),
      session.created_at,
      liveRetentionMs(session, this.retention),
      session.user_id,
    ];
    const created = await guard(() => createSessionScript.run(this.redis, keys, args));
    if (created !== 1) throw AppError.of('CONFLICT', `Session ${session.id} already exists`);
  }

  async get(id: string): Promise<Session | null> {
    const json = await guard(() => this.redis.hget(this.keys.session(id), 'session'));
    return json === null ? null : (JSON.parse(json) as Session);
  }

  async getByRoom(roomName: string, userId: string | null): Promise<Session | null> {
    const id =
      userId === null
        ? await this.anyTenantRoom(roomName)
        : ((await guard(() =>
            tenantRoomScript.run(
              this.redis,
              [this.keys.tenantRoomLatest(userId, roomName), this.keys.roomLatest(roomName)],
              [userId, this.keys.session('')],
            ),
          )) as string | null);
    return id === null ? null : this.get(id);
  }

  private async anyTenantRoom(roomName: string): Promise<string | null> {
    const id = (await guard(() =>
      anyTenantRoomScript.run(
        this.redis,
        [this.keys.roomLatest(roomName), this.keys.roomTenants(roomName)],
        [this.keys.session('')],
      ),
    )) as string | number | null;
    if (id === -1) throw roomOfSeveralTenants(roomName);
    return typeof id === 'string' ? id : null;
  }

  update(id: string, mutate: SessionMutation): Promise<SessionUpdateOutcome> {
    return this.queue.run(id, () => this.compareAndSet(id, mutate));
  }

  async list(userId: string, query: SessionListQuery): Promise<SessionPage> {
    const keys = [this.keys.userSessions(userId), this.keys.userExpiring(userId)];
    const args = [
      query.start_ms ?? '-inf',
      query.end_ms ?? '+inf',
      (query.page - 1) * query.limit,
      query.limit,
      query.direction ?? '',
      this.keys.session(''),
    ];
    const [total, ids] = (await guard(() => listSessionsScript.run(this.redis, keys, args))) as [number, string[]];
    if (ids.length === 0) return { sessions: [], total };
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(this.keys.session(id), 'session');
    const replies = (await guard(() => pipeline.exec())) ?? [];
    // A session that expired between the two calls is left out rather than failing the page.
    const sessions = replies.flatMap(([error, json]) =>
      error === null && typeof json === 'string' ? [JSON.parse(json) as Session] : [],
    );
    return { sessions, total };
  }

  /**
   * A lock key set with NX and a TTL, released by its own token only. Creates of one room from this
   * process queue in memory first, so only creates of other processes poll for the key.
   */
  withRoomLock<T>(userId: string, roomName: string, work: () => Promise<T>): Promise<T> {
    const key = this.keys.tenantRoomLock(userId, roomName);
    return this.rooms.run(key, async () => {
      const token = randomUUID();
      const take = async () =>
        (await guard(() => this.redis.set(key, token, 'PX', this.roomLockTtlMs, 'NX'))) === 'OK' ? true : null;
      const locked = await retry(take, { delayMs: jitteredDelay, wait: waitUntil(Date.now() + this.roomLockWaitMs) });
      if (locked === null)
        throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Session store is busy, try again', {
          headers: { 'Retry-After': '1' },
        });
      try {
        return await work();
      } finally {
        // A release that fails leaves the key to its TTL: later creates of the room wait, none is wrong.
        await releaseLockScript.run(this.redis, [key], [token]).catch(() => undefined);
      }
    });
  }

  private async compareAndSet(id: string, mutate: SessionMutation): Promise<SessionUpdateOutcome> {
    // null: another process wrote first, so the mutation is decided again on what it wrote.
    const outcome = await retry<SessionUpdateOutcome>(
      async () => {
        const revision = reviseSession(await this.get(id), mutate);
        if (revision.kind !== 'changed') return revision;
        const { before, after } = revision;
        const keys = [
          this.keys.session(id),
          this.keys.roomLatest(after.room_name),
          this.keys.tenantRoomLatest(after.user_id, after.room_name),
          this.keys.userExpiring(after.user_id),
          this.keys.roomTenants(after.room_name),
        ];
        const args = [id, before.version, after.version, JSON.stringify(after), liveRetentionMs(after, this.retention)];
        const written = await guard(() => updateSessionScript.run(this.redis, keys, args));
        if (written === 1) return { kind: 'changed', before, after };
        return written === -1 ? { kind: 'not_found' } : null;
      },
      { attempts: this.maxAttempts, delayMs: jitteredDelay },
    );
    if (outcome === null) throw AppError.of('DEPENDENCY_UNAVAILABLE', 'Session store is busy, try again');
    return outcome;
  }
}

function guard<T>(call: () => Promise<T>): Promise<T> {
  return unavailableOnError('Session store', call);
}
