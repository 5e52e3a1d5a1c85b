import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { BaseSequencer, type TestSpecification } from 'vitest/node';

/** Each file's time in a whole run (ms, by path from the repository's root): test/file-durations.json. */
export const DURATIONS_FILE = path.join(import.meta.dirname, '..', 'file-durations.json');

/**
 * Runs each group's files longest first, so that the last file a fork starts is a short one and the
 * group's forks end together. Vitest's own sequencer orders by the durations its cache kept from the
 * run before, and without that cache (a clean clone, as in CI) by file size, largest first, which puts a
 * long file of little source last (with-credentials.test.ts: 58 s, 1 KB), one fork idle while it runs.
 * A file's time is its time in the cache when the cache has it, else the one test/file-durations.json
 * records (a clean-clone run's; `npx tsx test/support/record-durations.ts <vitest JSON report>` writes
 * it again); files neither knows go first, as vitest puts them, then by size.
 */
export class DurationSequencer extends BaseSequencer {
  private readonly recorded: Readonly<Record<string, number>> = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8'));

  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const known = new Map<TestSpecification, { readonly time: number | null; readonly size: number }>();
    for (const spec of files) {
      const relative = path.relative(this.ctx.config.root, spec.moduleId);
      const cached = this.ctx.cache.getFileTestResults(`${spec.project.name}:${relative}`)?.duration;
      const time = cached ?? this.recorded[relative.split(path.sep).join('/')] ?? null;
      known.set(spec, { time, size: time === null ? statSync(spec.moduleId).size : 0 });
    }
    return [...files].sort((a, b) => {
      const [first, second] = [known.get(a)!, known.get(b)!];
      if (first.time === null || second.time === null)
        return first.time === second.time ? second.size - first.size : first.time === null ? -1 : 1;
      return second.time - first.time;
    });
  }
}
