import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { statfs } from 'node:fs/promises';
import { ClassicLevel } from 'classic-level';
import { MicroBatcher } from '../../shared/micro-batcher.ts';

/** One record of the journal: its position and the encoded envelope ingest appended. */
export interface JournalEntry {
  readonly seq: number;
  readonly value: string;
}

/** A range of positions the writer is storing (or was, when the process stopped): replayed as it was planned. */
export interface PlannedRound {
  readonly from: number;
  readonly to: number;
  readonly token: string;
  /** Replayed after the embedded engine was rebuilt: its events already stored are left out. */
  readonly uncertain?: boolean;
}

/** A record to append, and the tenant whose reads wait for it (null: every read waits for it). */
interface Appended {
  readonly value: string;
  readonly tenant: string | null;
}

interface Checkpoint {
  /** Every position below it is stored in ClickHouse. */
  readonly stored: number;
  readonly planned: PlannedRound | null;
}

const RECORD_PREFIX = 'r';
const CHECKPOINT_KEY = 'm:checkpoint';
const ID_KEY = 'm:id';
const PROBE_KEY = 'm:probe';
/** A tenant's last urgent read is forgotten this long after it (the writer asks about the last second). */
const FORGET_WAITS_AFTER_MS = 60_000;
// 16 digits sort as numbers do and hold far more than Number.MAX_SAFE_INTEGER's positions ever will.
const recordKey = (seq: number) => `${RECORD_PREFIX}${String(seq).padStart(16, '0')}`;

/**
 * The embedded mode's durable log between ingest and the writer, as Kafka is between them otherwise:
 * an append resolves once its records are synced to disk (so a 201 means durable), and the writer stores
 * them in rounds behind it. LevelDB (classic-level) keeps the records, the checkpoint and the plan of the
 * round in flight; it gives ordered keys, atomic batches, a synced log and recovery of a torn tail, which
 * a hand-written file format would have to get right again. Appends made while a sync is in flight go
 * out together in the next one (group commit), so many requests share one fsync.
 */
export class RecordJournal {
  private appendedSeq: number;
  private storedSeq: number;
  private plannedRound: PlannedRound | null;
  private readonly waiters: { readonly seq: number; readonly resolve: () => void; readonly urgent: boolean }[] = [];
  private readonly appends: MicroBatcher<Appended>;
  /**
   * The position after each tenant's last appended record not yet stored, and after the last record of
   * no tenant: a read for one tenant waits for its own records and for records of none, never for
   * another tenant's.
   */
  private readonly tenantEnds = new Map<string, number>();
  private sharedEnd: number;
  private readonly appendListeners = new Set<() => void>();
  private readonly waitListeners = new Set<() => void>();
  /** When a read of every tenant's records last waited urgently (performance.now()). */
  private lastSharedWaitAt = Number.NEGATIVE_INFINITY;
  /** When each tenant's reads last waited urgently for its records (performance.now()). */
  private readonly tenantWaitAt = new Map<string, number>();
  /** The positions stored when a wait for the writer last ran out: waits return at once until it moves on. */
  private stuckAt: number | null = null;
  /** Until when every write fails as a full disk would (the fault routes' injection; 0: never). */
  private refusingUntil = 0;
  /** The last write of the journal failed (a full or read-only disk). */
  private refusing = false;

  private constructor(
    private readonly db: ClassicLevel<string, string>,
    private readonly folder: string,
    /** Unique to this journal: tokens of its rounds never match a round of an earlier, deleted journal. */
    readonly id: string,
    checkpoint: Checkpoint,
    lastSeq: number | null,
  ) {
    this.storedSeq = checkpoint.stored;
    this.plannedRound = checkpoint.planned;
    this.appendedSeq = Math.max(checkpoint.stored, lastSeq === null ? 0 : lastSeq + 1);
    // Whose records a restart finds unstored is not kept: every read waits for them.
    this.sharedEnd = this.appendedSeq;
    this.appends = new MicroBatcher<Appended>((items) => this.write(items));
  }

  static async open(folder: string): Promise<RecordJournal> {
    mkdirSync(folder, { recursive: true });
    const db = new ClassicLevel<string, string>(folder, { keyEncoding: 'utf8', valueEncoding: 'utf8' });
    await db.open();
    let id = await db.get(ID_KEY);
    if (id === undefined) {
      id = randomUUID();
      await db.put(ID_KEY, id, { sync: true });
    }
    const saved = await db.get(CHECKPOINT_KEY);
    const checkpoint: Checkpoint = saved === undefined ? { stored: 0, planned: null } : JSON.parse(saved);
    const [last] = await db.keys({ gte: RECORD_PREFIX, lt: `${RECORD_PREFIX}~`, reverse: true, limit: 1 }).all();
    return new RecordJournal(db, folder, id, checkpoint, last === undefined ? null : Number(last.slice(1)));
  }

  /** Positions appended (and synced): the next record gets this one. */
  appended(): number {
    return this.appendedSeq;
  }

  /** Every position below this one is stored in ClickHouse. */
  stored(): number {
    return this.storedSeq;
  }

  /** The round that was being stored when the journal was last closed or the process ended, if any. */
  planned(): PlannedRound | null {
    return this.plannedRound;
  }

  /**
   * Resolves once `values` are on disk, in order, each at a position of its own. `tenants[i]` names
   * the tenant whose reads must see `values[i]`; absent or null, every read must.
   */
  append(values: readonly string[], tenants: readonly (string | null)[] = []): Promise<void> {
    return this.appends.submit(values.map((value, i) => ({ value, tenant: tenants[i] ?? null })));
  }

  /** Called after every synced append (the writer's wake-up); returns the unsubscribe. */
  onAppend(listener: () => void): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  /** Called whenever a caller starts an urgent wait for records not yet stored (the writer's cue to stop gathering); returns the unsubscribe. */
  onWait(listener: () => void): () => void {
    this.waitListeners.add(listener);
    return () => this.waitListeners.delete(listener);
  }

  /** Whether a caller is waiting urgently for records not yet stored. */
  awaited(): boolean {
    return this.waiters.some((waiter) => waiter.urgent);
  }

  /**
   * Whether a read that must see records not yet stored waited urgently within the last `withinMs`:
   * a read of every tenant's (any record waiting), or one of a tenant whose records, or records of no
   * tenant, wait now. A tenant that reads right after it writes has its rounds stored at once; another
   * tenant's records, waiting beside them, need not be.
   */
  awaitedWithin(withinMs: number): boolean {
    if (this.appendedSeq <= this.storedSeq) return false;
    const since = performance.now() - withinMs;
    if (this.lastSharedWaitAt >= since) return true;
    // Records of no tenant wait: every tenant's read waits for them.
    const readers = this.sharedEnd > this.storedSeq ? this.tenantWaitAt.keys() : this.tenantEnds.keys();
    for (const tenant of readers) if ((this.tenantWaitAt.get(tenant) ?? Number.NEGATIVE_INFINITY) >= since) return true;
    return false;
  }

  /** The records at positions from (inclusive) to `to` (exclusive). */
  async read(from: number, to: number): Promise<JournalEntry[]> {
    const entries = await this.db.iterator({ gte: recordKey(from), lt: recordKey(to) }).all();
    return entries.map(([key, value]) => ({ seq: Number(key.slice(1)), value }));
  }

  /** Written before a round is stored, so that a restart replays exactly it, under the same token. */
  async plan(round: PlannedRound): Promise<void> {
    await this.written(() =>
      this.db.put(CHECKPOINT_KEY, JSON.stringify({ stored: this.storedSeq, planned: round }), { sync: true }),
    );
    this.plannedRound = round;
  }

  /** The planned round is stored: its records go, and readers waiting for them are let through. */
  async markStored(to: number): Promise<void> {
    const from = this.storedSeq;
    await this.written(() =>
      this.db.batch(
        [
          { type: 'put', key: CHECKPOINT_KEY, value: JSON.stringify({ stored: to, planned: null }) },
          ...Array.from({ length: to - from }, (_, i) => ({ type: 'del' as const, key: recordKey(from + i) })),
        ],
        { sync: true },
      ),
    );
    this.storedSeq = to;
    this.stuckAt = null;
    this.plannedRound = null;
    for (const [tenant, end] of this.tenantEnds) if (end <= to) this.tenantEnds.delete(tenant);
    const forgotten = performance.now() - FORGET_WAITS_AFTER_MS;
    for (const [tenant, at] of this.tenantWaitAt) if (at < forgotten) this.tenantWaitAt.delete(tenant);
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]!.seq <= to) this.waiters.splice(i, 1)[0]!.resolve();
    }
  }

  /**
   * Resolves once every position below `seq` is stored. An urgent wait (a request's, by default) is the
   * writer's cue to store at once rather than gather (consumer/journal-runner.ts); `tenant` names whose
   * read it is (null: a read of every tenant's records).
   */
  storedThrough(seq: number, urgent = true, tenant: string | null = null): Promise<void> {
    if (seq <= this.storedSeq) return Promise.resolve();
    const stored = new Promise<void>((resolve) => this.waiters.push({ seq, resolve, urgent }));
    if (urgent) {
      const now = performance.now();
      if (tenant === null) this.lastSharedWaitAt = now;
      else this.tenantWaitAt.set(tenant, now);
      for (const listener of this.waitListeners) listener();
    }
    return stored;
  }

  /**
   * Resolves once everything appended before the call is stored (true), or after `timeoutMs` (false):
   * a read that follows a 201 sees what the 201 acknowledged, and one behind a stalled writer still
   * gets an answer. With `tenant`, only that tenant's records and those of no tenant are waited for:
   * a read of one tenant's data does not wait for the rounds of another's.
   */
  async caughtUp(timeoutMs: number, tenant: string | null = null, urgent = true): Promise<boolean> {
    const target = tenant === null ? this.appendedSeq : Math.max(this.sharedEnd, this.tenantEnds.get(tenant) ?? 0);
    if (target <= this.storedSeq) return true;
    // A request waits once: its later reads, and every request after it, answer from what is stored
    // until the writer stores again, instead of each waiting the full time behind a writer that cannot.
    // Nor does one wait while the journal refuses writes: the writer cannot mark what it stores.
    if (this.stuckAt === this.storedSeq || this.refusing) return false;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
    try {
      const caught = await Promise.race([
        this.storedThrough(target, urgent, tenant).then(() => true as const),
        timedOut,
      ]);
      if (!caught) this.stuckAt = this.storedSeq;
      return caught;
    } finally {
      clearTimeout(timer);
    }
  }

  /**
   * Why the journal cannot take appends now, or null: its disk has less than `minFreeBytes` free, or a
   * synced write of a few bytes fails (a full or read-only disk, a database that refuses writes). Asked
   * by /readyz, so that a balancer stops sending writes before they fail, and sends them again after.
   */
  async refusal(minFreeBytes: number): Promise<string | null> {
    const disk = await statfs(this.folder);
    const free = disk.bavail * disk.bsize;
    if (free < minFreeBytes)
      return `the journal's disk has ${Math.floor(free / 1_048_576)} MB free, below ${Math.floor(minFreeBytes / 1_048_576)} MB`;
    try {
      await this.written(() => this.db.put(PROBE_KEY, String(Date.now()), { sync: true }));
      return null;
    } catch (error) {
      return `the journal refuses writes: ${error instanceof Error ? error.message : String(error)}`;
    }
  }

  /** Makes every write fail for `ms` as a full disk would (the fault routes' injection). */
  refuseWritesFor(ms: number): void {
    this.refusingUntil = Date.now() + ms;
  }

  async close(): Promise<void> {
    await this.appends.drain();
    await this.db.close();
  }

  /** Every write of the journal: whether the last one failed tells the readers not to wait for the writer. */
  private async written<T>(write: () => Promise<T>): Promise<T> {
    try {
      if (Date.now() < this.refusingUntil)
        throw Object.assign(new Error('ENOSPC: no space left on device (injected)'), { code: 'ENOSPC' });
      const result = await write();
      this.refusing = false;
      return result;
    } catch (error) {
      this.refusing = true;
      throw error;
    }
  }

  private async write(items: readonly Appended[]): Promise<void> {
    const first = this.appendedSeq;
    await this.written(() =>
      this.db.batch(
        items.map(({ value }, i) => ({ type: 'put' as const, key: recordKey(first + i), value })),
        { sync: true },
      ),
    );
    this.appendedSeq = first + items.length;
    items.forEach(({ tenant }, i) => {
      if (tenant === null) this.sharedEnd = first + i + 1;
      else this.tenantEnds.set(tenant, first + i + 1);
    });
    for (const listener of this.appendListeners) listener();
  }
}
