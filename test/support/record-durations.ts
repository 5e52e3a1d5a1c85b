import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { DURATIONS_FILE } from './duration-sequencer.ts';

/**
 * Writes test/file-durations.json from a vitest JSON report (`npx vitest run --reporter=json
 * --outputFile=report.json`): each file's time, rounded to 100 ms, keyed by its path from the
 * repository's root. Run it after a whole run on a quiet machine, and commit the file.
 */
interface Report {
  readonly testResults: readonly { readonly name: string; readonly startTime: number; readonly endTime: number }[];
}

const [reportPath] = process.argv.slice(2);
if (reportPath === undefined) throw new Error('usage: npx tsx test/support/record-durations.ts <vitest JSON report>');
const report = JSON.parse(readFileSync(reportPath, 'utf8')) as Report;
const root = path.join(import.meta.dirname, '..', '..');
const durations = Object.fromEntries(
  report.testResults
    .map(
      ({ name, startTime, endTime }) =>
        [path.relative(root, name).split(path.sep).join('/'), Math.round((endTime - startTime) / 100) * 100] as const,
    )
    .sort(([a], [b]) => a.localeCompare(b)),
);
writeFileSync(DURATIONS_FILE, `${JSON.stringify(durations, null, 2)}\n`);
process.stdout.write(
  `wrote ${Object.keys(durations).length} files' durations to ${path.relative(root, DURATIONS_FILE)}\n`,
);
