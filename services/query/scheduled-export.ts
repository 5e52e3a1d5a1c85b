import { createWriteStream } from 'node:fs';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { tableName } from '../shared/clickhouse/tables.ts';
import type { Config } from '../shared/config.ts';
import type { Logger } from '../shared/logger.ts';
import { DAY_MS, isoDay, parquetExport } from './usage-export.ts';

/** Where a day's file goes: Hive-style folders a data lake (or an S3 sync of the folder) reads by partition. */
export function dayFile(dir: string, day: string): string {
  return path.join(dir, 'table=usage_events', `dt=${day}`, 'part-0.parquet');
}

/**
 * One pass of the scheduled export: every complete UTC day (before today) holding usage is written
 * to its own Parquet file, every tenant's events in it, when its file is missing or the day is one of
 * the last `lookbackDays` (where late usage may still land). A file is written beside its place and
 * renamed into it, so a reader never sees half a file; the same events give the same file, so a pass
 * run again changes nothing. Returns the days written.
 */
export async function exportDays(
  ch: ClickHouse,
  { dir, lookbackDays }: Pick<NonNullable<Config['usageExport']>, 'dir' | 'lookbackDays'>,
  now = Date.now(),
): Promise<string[]> {
  const today = now - (now % DAY_MS);
  const result = await ch.client.query({
    // The daily rollup names the days with usage without reading the events. (An alias named like the
    // column would be what WHERE compares: ClickHouse resolves a name to a SELECT alias first.)
    query: `SELECT DISTINCT toString(toDate(day)) AS usage_day FROM ${tableName(ch, 'usageTotalsDaily')}
      WHERE day < fromUnixTimestamp64Milli({today:Int64}, 'UTC') ORDER BY usage_day`,
    query_params: { today },
    format: 'JSONEachRow',
  });
  const recent = isoDay(today - lookbackDays * DAY_MS);
  const written: string[] = [];
  for (const { usage_day: day } of await result.json<{ usage_day: string }>()) {
    const file = dayFile(dir, day);
    if (day < recent && (await exists(file))) continue;
    const start = Date.parse(`${day}T00:00:00Z`);
    await mkdir(path.dirname(file), { recursive: true });
    const partial = `${file}.partial`;
    try {
      await pipeline(await parquetExport(ch, { start, end: start + DAY_MS, userId: null }), createWriteStream(partial));
      await rename(partial, file);
    } finally {
      await rm(partial, { force: true });
    }
    written.push(day);
  }
  return written;
}

/** Runs `exportDays` now and every `intervalMs`, one pass at a time; stop() waits for the pass in progress. */
export function scheduleExports(ch: ClickHouse, options: NonNullable<Config['usageExport']>, log: Logger) {
  let running: Promise<void> = Promise.resolve();
  const pass = () => {
    running = running.then(async () => {
      try {
        const days = await exportDays(ch, options);
        if (days.length > 0) log.info({ days, dir: options.dir }, 'usage_exported');
      } catch (error) {
        log.warn({ err: error, dir: options.dir }, 'usage_export_failed');
      }
    });
  };
  pass();
  const timer = setInterval(pass, options.intervalMs);
  timer.unref();
  return {
    stop: async () => {
      clearInterval(timer);
      await running;
    },
  };
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
