import { mkdir, open, readFile, rmdir, stat } from 'node:fs/promises';
import path from 'node:path';
import type { UsageBody } from './records.ts';

/**
 * Dead letters: usage events the server refused for what they hold, kept in a JSON-lines file beside
 * the spool until `callmeter dead-letters resend` (the Python client's command, which reads this same
 * file) gets them accepted. The format and the lock are the Python client's (`_dead_letters.py`).
 */
export const DEAD_LETTER_FILE = 'callmeter-dead-letters.jsonl';

export interface DeadLetter {
  readonly event_id: string;
  readonly refused_at: string;
  /** The HTTP status when the event was refused as a whole request; null when refused as a batch item. */
  readonly status: number | null;
  readonly errors: unknown;
  readonly body: UsageBody;
}

// The lock is a directory beside the file (mkdir is atomic; Node has no flock, and the Python command
// takes the same lock): a holder keeps it for one write, so one older than this was left by a dead process.
const LOCK_STALE_MS = 30_000;
const LOCK_WAIT_MS = 10_000;

export function deadLetter(body: UsageBody, status: number | null, errors: unknown): DeadLetter {
  return { event_id: body.event_id, refused_at: new Date().toISOString(), status, errors, body };
}

export class DeadLetterFile {
  constructor(readonly file: string) {}

  /** Every dead letter, oldest first; a line cut short by a crash mid-write is skipped. */
  async read(): Promise<DeadLetter[]> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw error;
    }
    const letters: DeadLetter[] = [];
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        letters.push(JSON.parse(line) as DeadLetter);
      } catch {
        continue;
      }
    }
    return letters;
  }

  /** Appends (on disk before it resolves); an event already there is not written twice. */
  async add(letters: readonly DeadLetter[]): Promise<void> {
    if (letters.length === 0) return;
    await mkdir(path.dirname(path.resolve(this.file)), { recursive: true });
    await this.locked(async () => {
      const have = new Set((await this.read()).map((letter) => letter.event_id));
      const fresh = letters.filter((letter) => !have.has(letter.event_id));
      if (fresh.length === 0) return;
      const handle = await open(this.file, 'a');
      try {
        await handle.write(fresh.map((letter) => `${JSON.stringify(letter)}\n`).join(''));
        await handle.sync();
      } finally {
        await handle.close();
      }
    });
  }

  async count(): Promise<number> {
    return (await this.read()).length;
  }

  private async locked(work: () => Promise<void>): Promise<void> {
    const lock = `${this.file}.lock`;
    const deadline = Date.now() + LOCK_WAIT_MS;
    for (;;) {
      try {
        await mkdir(lock);
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
      }
      const held = await stat(lock).catch(() => null);
      if (held && Date.now() - held.mtimeMs > LOCK_STALE_MS) {
        await rmdir(lock).catch(() => undefined);
        continue;
      }
      if (Date.now() > deadline) throw new Error(`${lock} is held by another process`);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    try {
      await work();
    } finally {
      await rmdir(lock);
    }
  }
}
