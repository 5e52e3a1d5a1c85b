import { execFile } from 'node:child_process';
import { promisify } from 'node:util';

const run = promisify(execFile);

/**
 * Calls glibc's malloc_trim(0) in a running process, through gdb, and says whether it ran.
 *
 * Why: a V8 heap snapshot leaves the process holding what the snapshot generator freed, many times the
 * heap, and never returns it (v8.writeHeapSnapshot in the process does the same). That memory is reused,
 * so after a snapshot RSS both grows by the snapshot and hides native growth up to that size; after
 * malloc_trim(0) RSS and later allocations read true again (figures in bench/results/dated-runs.md,
 * the soak). Node has no binding for malloc_trim, and the soak must not load code of its own into
 * callmeter; gdb stops the process for about a second.
 */
export async function trimMalloc(pid: number): Promise<boolean> {
  try {
    const { stdout } = await run(
      'gdb',
      [
        '-p',
        String(pid),
        '--batch',
        '-nx',
        // Only libc's symbols: reading those of chdb's 540 MiB library would take minutes.
        '-iex',
        'set auto-solib-add off',
        '-ex',
        'sharedlibrary libc.so',
        '-ex',
        'call (int) malloc_trim(0)',
      ],
      { timeout: 120_000 },
    );
    return /^\$1 = [01]$/m.test(stdout);
  } catch {
    return false;
  }
}
