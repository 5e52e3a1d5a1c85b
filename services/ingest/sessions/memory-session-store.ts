import { AppError } from '../../shared/errors.ts';
import { roomQueue } from '../shared/keyed-queue.ts';
import { isFinalStatus, type Session } from './session.ts';
import * as store from './session-store.ts';

interface Entry {
  readonly session: Session;
  readonly expiresAt: number;
}

const SWEEP_INTERVAL_MS = 60_000;

/**
 * The embedded mode's store: one process, so a synchronous read-modify-write inside one call is
 * already atomic. Sessions expire like in Redis, so both modes keep the same amount of state.
 */
export class MemorySessionStore implements store.SessionStore {
  private readonly entries = new Map<string, Entry>();
  /** The latest session of a room, of any tenant (reads that name none). */
  private readonly latestByRoom = new Map<string, string>();
  /** The latest session of a tenant's room (store.tenantRoom). */
  private readonly latestByTenantRoom = new Map<string, string>();
  /** Per room, the tenants whose sessions it has seen (checked live on read). */
  private readonly tenantsByRoom = new Map<string, Set<string>>();
  private readonly rooms = roomQueue();
  private readonly retention: store.SessionStoreOptions;
  private readonly now: () => number;
  private nextSweepAt = 0;

  constructor(options: store.SessionStoreOptions & { readonly now?: () => number } = {}) {
    this.retention = options;
    this.now = options.now ?? Date.now;
  }

  async create(session: Session): Promise<void> {
    this.sweepNowAndThen();
    if (this.live(session.id) !== null) throw AppError.of('CONFLICT', `Session ${session.id} already exists`);
    this.put(session);
    this.point(this.latestByRoom, session.room_name, session);
    this.point(this.latestByTenantRoom, store.tenantRoom(session.user_id, session.room_name), session);
    const tenants = this.tenantsByRoom.get(session.room_name) ?? new Set<string>();
    this.tenantsByRoom.set(session.room_name, tenants.add(session.user_id));
  }

  async get(id: string): Promise<Session | null> {
    return this.live(id);
  }

  async getByRoom(roomName: string, userId: string | null): Promise<Session | null> {
    if (userId === null && this.liveTenants(roomName) > 1) throw store.roomOfSeveralTenants(roomName);
    const id =
      userId === null
        ? this.latestByRoom.get(roomName)
        : this.latestByTenantRoom.get(store.tenantRoom(userId, roomName));
    return id === undefined ? null : this.live(id);
  }

  /** A tenant's latest session of the room is its live one if it has one: a room holds one live session per tenant. */
  private liveTenants(roomName: string): number {
    let live = 0;
    for (const userId of this.tenantsByRoom.get(roomName) ?? []) {
      const id = this.latestByTenantRoom.get(store.tenantRoom(userId, roomName));
      const session = id === undefined ? null : this.live(id);
      if (session !== null && !isFinalStatus(session.status)) live += 1;
    }
    return live;
  }

  async update(id: string, mutate: store.SessionMutation): Promise<store.SessionUpdateOutcome> {
    const outcome = store.reviseSession(this.live(id), mutate);
    if (outcome.kind === 'changed') this.put(outcome.after);
    return outcome;
  }

  async list(userId: string, query: store.SessionListQuery): Promise<store.SessionPage> {
    const start = query.start_ms ?? -Infinity;
    const end = query.end_ms ?? Infinity;
    const matching = [...this.entries.keys()]
      .map((id) => this.live(id))
      .filter(
        (s): s is Session =>
          s !== null &&
          s.user_id === userId &&
          s.created_at >= start &&
          s.created_at <= end &&
          (query.direction === undefined || s.call_direction === query.direction),
      )
      .sort(newestFirst);
    const offset = (query.page - 1) * query.limit;
    return { sessions: matching.slice(offset, offset + query.limit), total: matching.length };
  }

  withRoomLock<T>(userId: string, roomName: string, work: () => Promise<T>): Promise<T> {
    return this.rooms.run(store.tenantRoom(userId, roomName), work);
  }

  private point(index: Map<string, string>, key: string, session: Session): void {
    const latest = index.get(key);
    const current = latest === undefined ? null : this.live(latest);
    // A session restored from the history can be older than the room's latest: it must not take over.
    if (current === null || session.created_at >= current.created_at) index.set(key, session.id);
  }

  private put(session: Session): void {
    this.entries.set(session.id, { session, expiresAt: this.now() + store.liveRetentionMs(session, this.retention) });
  }

  private live(id: string): Session | null {
    const entry = this.entries.get(id);
    if (entry === undefined) return null;
    if (entry.expiresAt <= this.now()) {
      this.forget(entry.session);
      return null;
    }
    return entry.session;
  }

  private forget(session: Session): void {
    this.entries.delete(session.id);
    if (this.latestByRoom.get(session.room_name) === session.id) this.latestByRoom.delete(session.room_name);
    const key = store.tenantRoom(session.user_id, session.room_name);
    if (this.latestByTenantRoom.get(key) === session.id) {
      this.latestByTenantRoom.delete(key);
      const tenants = this.tenantsByRoom.get(session.room_name);
      tenants?.delete(session.user_id);
      if (tenants?.size === 0) this.tenantsByRoom.delete(session.room_name);
    }
  }

  // Expired sessions are dropped on access; this pass bounds memory for sessions nobody reads again.
  private sweepNowAndThen(): void {
    const now = this.now();
    if (now < this.nextSweepAt) return;
    this.nextSweepAt = now + SWEEP_INTERVAL_MS;
    for (const id of [...this.entries.keys()]) this.live(id);
  }
}

/** Newest first; the id breaks ties the way Redis orders equal scores in reverse. */
function newestFirst(a: Session, b: Session): number {
  if (a.created_at !== b.created_at) return b.created_at - a.created_at;
  return a.id < b.id ? 1 : a.id > b.id ? -1 : 0;
}
