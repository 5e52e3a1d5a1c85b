import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const ROOT_ENV = 'CALLMETER_TEST_TMP_ROOT';

/**
 * The first global setup of every project: the run's temporary files (each test file's data folders,
 * its processes', the broker's and the client packages') go under one folder of the run's own
 * (TMPDIR, which its forks and their children inherit), removed when the run ends. A full run leaves
 * gigabytes of engine data, which piled up in /tmp run after run until the disk was full.
 * KEEP_TEST_DATA=1 keeps the folder, and names it, to look into a failure.
 */
export default function setup(): () => void {
  // The projects' setups may all run before any test: the first makes the folder, the others use it
  // (nested, the folders made a path too long for chromium's socket), and the first's teardown, the
  // last to run, removes it.
  if (process.env[ROOT_ENV] !== undefined) return () => undefined;
  const root = mkdtempSync(path.join(os.tmpdir(), 'callmeter-run-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  process.env[ROOT_ENV] = root;
  return () => {
    delete process.env[ROOT_ENV];
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (process.env.KEEP_TEST_DATA === '1') process.stderr.write(`[test data] kept in ${root}\n`);
    else rmSync(root, { recursive: true, force: true });
  };
}
