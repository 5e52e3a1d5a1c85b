import type { Config } from '../config.ts';

type EmbeddedMemory = Config['clickhouse']['embeddedMemory'];

/**
 * CLICKHOUSE_EMBEDDED_CACHE_MB shared out among the engine's caches that hold memory as data is read.
 * Marks are what every read of a part opens first, so they get the most. The uncompressed cache and the
 * page cache stay off, as ClickHouse leaves them.
 */
const CACHE_SHARES = {
  mark_cache_size: 1 / 2,
  primary_index_cache_size: 1 / 4,
  index_mark_cache_size: 1 / 8,
  query_condition_cache_size: 1 / 16,
  compiled_expression_cache_size: 1 / 16,
} as const;

/**
 * The server settings the embedded engine starts with, as `clickhouse local` command-line arguments:
 * ClickHouse sizes its defaults for a server of its own (a memory limit of 90 % of the RAM, caches of
 * 5 GiB each), which in a process beside the services would let the engine grow past the machine. Past
 * the limit a statement fails (MEMORY_LIMIT_EXCEEDED) rather than the process; merges start only while
 * the engine holds less than half of it.
 */
export function embeddedEngineArguments({ limitBytes, cacheBytes }: EmbeddedMemory): string[] {
  return [
    `--max_server_memory_usage=${limitBytes}`,
    `--merges_mutations_memory_usage_soft_limit=${Math.floor(limitBytes / 2)}`,
    ...Object.entries(CACHE_SHARES).map(([setting, share]) => `--${setting}=${Math.floor(cacheBytes * share)}`),
  ];
}
