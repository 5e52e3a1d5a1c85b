import { randomUUID } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { ClassicLevel } from 'classic-level';
import { MicroBatcher } from '../micro-batcher.ts';

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

interface Checkpoint {
  /** Every position below it is stored in ClickHouse. */
  readonly stored: number;
  readonly planned: PlannedRound | null;
}

const RECORD_PREFIX = 'r';
const CHECKPOINT_KEY = 'm:checkpoint';
const ID_KEY = 'm:id';
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
  private readonly waiters: { readonly seq: number; readonly resolve: () => void }[] = [];
  private readonly appends: MicroBatcher<string>;
  private readonly appendListeners = new Set<() => void>();

  private constructor(
    private readonly db: ClassicLevel<string, string>,
    /** Unique to this journal: tokens of its rounds never match a round of an earlier, deleted journal. */
    readonly id: string,
    checkpoint: Checkpoint,
    lastSeq: number | null,
  ) {
    this.storedSeq = checkpoint.stored;
    this.plannedRound = checkpoint.planned;
    this.appendedSeq = Math.max(checkpoint.stored, lastSeq === null ? 0 : lastSeq + 1);
    this.appends = new MicroBatcher<string>((values) => this.write(values));
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
    return new RecordJournal(db, id, checkpoint, last === undefined ? null : Number(last.slice(1)));
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

  /** Resolves once `values` are on disk, in order, each at a position of its own. */
  append(values: readonly string[]): Promise<void> {
    return this.appends.submit(values);
  }

  /** Called after every synced append (the writer's wake-up); returns the unsubscribe. */
  onAppend(listener: () => void): () => void {
    this.appendListeners.add(listener);
    return () => this.appendListeners.delete(listener);
  }

  /** The records at positions from (inclusive) to `to` (exclusive). */
  async read(from: number, to: number): Promise<JournalEntry[]> {
    const entries = await this.db.iterator({ gte: recordKey(from), lt: recordKey(to) }).all();
    return entries.map(([key, value]) => ({ seq: Number(key.slice(1)), value }));
  }

  /** Written before a round is stored, so that a restart replays exactly it, under the same token. */
  async plan(round: PlannedRound): Promise<void> {
    await this.db.put(CHECKPOINT_KEY, JSON.stringify({ stored: this.storedSeq, planned: round }), { sync: true });
    this.plannedRound = round;
  }

  /** The planned round is stored: its records go, and readers waiting for them are let through. */
  async markStored(to: number): Promise<void> {
    const from = this.storedSeq;
    await this.db.batch(
      [
        { type: 'put', key: CHECKPOINT_KEY, value: JSON.stringify({ stored: to, planned: null }) },
        ...Array.from({ length: to - from }, (_, i) => ({ type: 'del' as const, key: recordKey(from + i) })),
      ],
      { sync: true },
    );
    this.storedSeq = to;
    this.plannedRound = null;
    for (let i = this.waiters.length - 1; i >= 0; i--) {
      if (this.waiters[i]!.seq <= to) this.waiters.splice(i, 1)[0]!.resolve();
    }
  }

  /** Resolves once every position below `seq` is stored. */
  storedThrough(seq: number): Promise<void> {
    if (seq <= this.storedSeq) return Promise.resolve();
    return new Promise((resolve) => this.waiters.push({ seq, resolve }));
  }

  /**
   * Resolves once everything appended before the call is stored (true), or after `timeoutMs` (false):
   * a read that follows a 201 sees what the 201 acknowledged, and one behind a stalled writer still
   * gets an answer.
   */
  async caughtUp(timeoutMs: number): Promise<boolean> {
    const target = this.appendedSeq;
    if (target <= this.storedSeq) return true;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<false>((resolve) => (timer = setTimeout(resolve, timeoutMs, false)));
    try {
      return await Promise.race([this.storedThrough(target).then(() => true as const), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  async close(): Promise<void> {
    await this.appends.drain();
    await this.db.close();
  }

  private async write(values: readonly string[]): Promise<void> {
    const first = this.appendedSeq;
    await this.db.batch(
      values.map((value, i) => ({ type: 'put' as const, key: recordKey(first + i), value })),
      { sync: true },
    );
    this.appendedSeq = first + values.length;
    for (const listener of this.appendListeners) listener();
  }
}
