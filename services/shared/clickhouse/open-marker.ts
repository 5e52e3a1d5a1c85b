import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export interface OpenMarker {
  /** The process that had the engine's folder before this one ended without closing it (SIGKILL, crash). */
  readonly uncleanBefore: boolean;
  /** Called once the engine is closed: the next process then finds the folder closed cleanly. */
  readonly closed: () => void;
}

/**
 * A file that exists while a process has the embedded engine's folder open. An insert into a table
 * with materialized views writes one part per table, each with its own deduplication log entry; a
 * process killed in the middle can leave a view with a block that its source lacks, or without one
 * it has, which no replay repairs. Finding the file at start says that this may have happened.
 */
export function markEngineOpen(dataDir: string): OpenMarker {
  mkdirSync(dataDir, { recursive: true });
  const file = path.join(dataDir, 'clickhouse.open');
  const uncleanBefore = existsSync(file);
  writeFileSync(file, `${process.pid}\n`);
  return { uncleanBefore, closed: () => rmSync(file, { force: true }) };
}
