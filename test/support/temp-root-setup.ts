import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

/**
 * The first global setup of every project: the run's temporary files (each test file's data folders,
 * its processes', the broker's and the client packages') go under one folder of the project's own
 * (TMPDIR, which its forks and their children inherit), removed when the run ends. A full run leaves
 * gigabytes of engine data, which piled up in /tmp run after run until the disk was full.
 * KEEP_TEST_DATA=1 keeps the folder, and names it, to look into a failure.
 */
export default function setup(): () => void {
  const root = mkdtempSync(path.join(os.tmpdir(), 'callmeter-run-'));
  const before = process.env.TMPDIR;
  process.env.TMPDIR = root;
  return () => {
    if (before === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = before;
    if (process.env.KEEP_TEST_DATA === '1') process.stderr.write(`[test data] kept in ${root}\n`);
    else rmSync(root, { recursive: true, force: true });
  };
}
