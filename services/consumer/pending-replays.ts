import { randomUUID } from 'node:crypto';
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/**
 * The batches a consumer group had planned (offset plans, see offset-plan.ts) when the embedded
 * engine's views were rebuilt after a crash: until each is committed past, its replay must leave
 * out the usage events already stored and insert the rest under a token no table has seen (see
 * record-writer.ts). Kept in a file beside the engine's folder, so that a process stopped cleanly
 * before replaying them hands them on to the next one. Each process names its own rebuild token:
 * a replay that landed in part under one process's token must not have its rest dropped as a repeat.
 */
export class PendingReplays {
  readonly id = randomUUID();

  private constructor(
    private readonly file: string,
    private readonly tokens: Set<string>,
  ) {}

  /** Whether an earlier process left replays pending (the file exists only while some are). */
  static saved(dataDir: string): boolean {
    return existsSync(PendingReplays.fileIn(dataDir));
  }

  private static fileIn(dataDir: string): string {
    return path.join(dataDir, 'clickhouse.replays.json');
  }

  /**
   * After a rebuild every planned batch is pending; otherwise those still pending from before that
   * the group still plans (a plan committed past is gone from the broker, so it is dropped here).
   */
  static open(
    dataDir: string,
    { rebuilt, planned }: { rebuilt: boolean; planned: ReadonlySet<string> },
  ): PendingReplays {
    const file = PendingReplays.fileIn(dataDir);
    const saved = existsSync(file)
      ? new Set((JSON.parse(readFileSync(file, 'utf8')) as { tokens: string[] }).tokens)
      : new Set<string>();
    const pending = new PendingReplays(file, new Set([...planned].filter((token) => rebuilt || saved.has(token))));
    pending.save();
    return pending;
  }

  has(token: string): boolean {
    return this.tokens.has(token);
  }

  /** The group committed past this batch: its replay cannot come any more. */
  committed(token: string): void {
    if (this.tokens.delete(token)) this.save();
  }

  get size(): number {
    return this.tokens.size;
  }

  private save(): void {
    if (this.tokens.size === 0) return rmSync(this.file, { force: true });
    // Written whole, then renamed: a crash leaves the old file or the new one, never half of one.
    writeFileSync(`${this.file}.tmp`, JSON.stringify({ tokens: [...this.tokens] }));
    renameSync(`${this.file}.tmp`, this.file);
  }
}
