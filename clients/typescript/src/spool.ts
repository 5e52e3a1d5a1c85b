import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { UsageBody } from './records.ts';

/** Where recorded events wait until the server has answered for them. */
export interface Pending {
  add(body: UsageBody): void;
  oldest(limit: number): [number, UsageBody][];
  remove(seqs: readonly number[]): void;
  readonly size: number;
  close(): void;
}

export class MemoryPending implements Pending {
  private readonly items = new Map<number, UsageBody>();
  private next = 0;

  add(body: UsageBody): void {
    this.next += 1;
    this.items.set(this.next, body);
  }

  oldest(limit: number): [number, UsageBody][] {
    return oldestOf(this.items, limit);
  }

  remove(seqs: readonly number[]): void {
    for (const seq of seqs) this.items.delete(seq);
  }

  get size(): number {
    return this.items.size;
  }

  close(): void {}
}

export const SPOOL_FILE = 'callmeter-spool.jsonl';

/**
 * An append-only JSON-lines file: an event is written before record() returns ({"seq","body"}) and
 * leaves once answered ({"done":[seqs]}), so what a killed worker had not sent goes out at its next
 * start under the same ids. Synchronous writes, as the Python client's SQLite spool: they reach the
 * operating system before record() returns, which a killed process does not undo. Rewritten to the
 * events still waiting at each start and when answered lines outnumber them. Hand-written because
 * Node 20 has no SQLite and the package has no runtime dependency; one process per spool folder.
 */
export class SpoolPending implements Pending {
  private readonly items = new Map<number, UsageBody>();
  private readonly file: string;
  private fd: number | null;
  private next = 0;
  private answered = 0;

  constructor(spoolDir: string) {
    mkdirSync(spoolDir, { recursive: true });
    this.file = path.join(spoolDir, SPOOL_FILE);
    let text = '';
    try {
      text = readFileSync(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
    }
    for (const line of text.split('\n')) {
      if (line === '') continue;
      let entry: { seq?: number; body?: UsageBody; done?: number[] };
      try {
        entry = JSON.parse(line) as typeof entry;
      } catch {
        continue; // a line cut short by a crash mid-write: record() had not returned for it
      }
      if (entry.done) for (const seq of entry.done) this.items.delete(seq);
      else if (entry.seq !== undefined && entry.body) this.items.set(entry.seq, entry.body);
      if (entry.seq !== undefined) this.next = Math.max(this.next, entry.seq);
    }
    this.fd = this.compact();
  }

  add(body: UsageBody): void {
    this.next += 1;
    writeSync(this.open(), `${JSON.stringify({ seq: this.next, body })}\n`);
    this.items.set(this.next, body);
  }

  oldest(limit: number): [number, UsageBody][] {
    return oldestOf(this.items, limit);
  }

  remove(seqs: readonly number[]): void {
    if (seqs.length === 0) return;
    writeSync(this.open(), `${JSON.stringify({ done: seqs })}\n`);
    for (const seq of seqs) this.items.delete(seq);
    this.answered += seqs.length;
    if (this.answered > Math.max(10_000, this.items.size)) {
      closeSync(this.open());
      this.fd = this.compact();
    }
  }

  get size(): number {
    return this.items.size;
  }

  close(): void {
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }

  private open(): number {
    if (this.fd === null) throw new Error('the spool is closed');
    return this.fd;
  }

  /** Rewrites the file to the waiting events (a new file renamed over the old) and opens it to append. */
  private compact(): number {
    const temporary = `${this.file}.tmp`;
    const fd = openSync(temporary, 'w');
    const lines = [...this.items].map(([seq, body]) => `${JSON.stringify({ seq, body })}\n`).join('');
    if (lines !== '') writeSync(fd, lines);
    fsyncSync(fd);
    closeSync(fd);
    renameSync(temporary, this.file);
    this.answered = 0;
    return openSync(this.file, 'a');
  }
}

/** The first `limit` events of a queue, in the order they were recorded. */
function oldestOf(items: ReadonlyMap<number, UsageBody>, limit: number): [number, UsageBody][] {
  const out: [number, UsageBody][] = [];
  for (const item of items) {
    if (out.length >= limit) break;
    out.push(item);
  }
  return out;
}
