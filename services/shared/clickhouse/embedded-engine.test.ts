import { describe, expect, it } from 'vitest';
import { embeddedEngineArguments } from './embedded-engine.ts';

const MIB = 1_048_576;

describe('the embedded engine arguments', () => {
  it('give the engine the memory limit and share the cache budget out among its caches', () => {
    const args = embeddedEngineArguments({ limitBytes: 1_024 * MIB, cacheBytes: 64 * MIB });
    expect(args).toEqual([
      `--max_server_memory_usage=${1_024 * MIB}`,
      `--merges_mutations_memory_usage_soft_limit=${512 * MIB}`,
      `--mark_cache_size=${32 * MIB}`,
      `--primary_index_cache_size=${16 * MIB}`,
      `--index_mark_cache_size=${8 * MIB}`,
      `--query_condition_cache_size=${4 * MIB}`,
      `--compiled_expression_cache_size=${4 * MIB}`,
    ]);
  });

  it('never give the caches together more than the budget', () => {
    const cacheBytes = 77 * MIB + 3;
    const total = embeddedEngineArguments({ limitBytes: 1_024 * MIB, cacheBytes })
      .filter((arg) => /cache_size=/.test(arg))
      .reduce((sum, arg) => sum + Number(arg.split('=')[1]), 0);
    expect(total).toBeLessThanOrEqual(cacheBytes);
    expect(total).toBeGreaterThan(cacheBytes - 8);
  });

  it('take a cache budget of 0 as every cache off', () => {
    const args = embeddedEngineArguments({ limitBytes: 256 * MIB, cacheBytes: 0 });
    expect(args.filter((arg) => /cache_size=/.test(arg)).every((arg) => arg.endsWith('=0'))).toBe(true);
  });
});
