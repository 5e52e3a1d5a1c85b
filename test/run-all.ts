// `npm test`: every check in order, stopping at the first that fails, then one closing line that
// counts the tests that ran: "tests: N passed, N failed, N skipped". CI reads that line (vitest's
// own summary is not one it knows), so the counts come from the runners' machine-readable reports,
// never from this script: vitest's JSON reporter and Schemathesis's JUnit report.
import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { addCounts, countJunit, countVitest, type TestCounts } from './support/test-counts.js';

interface Step {
  readonly name: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
  readonly report?: { readonly path: string; readonly read: (text: string) => TestCounts };
}

const say = (line: string) => process.stdout.write(`${line}\n`);
const reports = join(process.cwd(), '.local', 'test-reports');

function vitestStep(project: string): Step {
  const path = join(reports, `${project}.json`);
  return {
    name: `vitest ${project}`,
    args: ['exec', '--', 'vitest', 'run', '--project', project, '--reporter=default', '--reporter=json', `--outputFile.json=${path}`],
    report: { path, read: countVitest },
  };
}

const fuzzReport = join(reports, 'schemathesis.xml');
const steps: readonly Step[] = [
  { name: 'typecheck', args: ['run', '-s', 'typecheck'] },
  { name: 'lint', args: ['run', '-s', 'lint'] },
  vitestStep('unit'),
  vitestStep('integration'),
  vitestStep('faults'),
  { name: 'schemathesis', args: ['run', '-s', 'test:fuzz'], env: { SCHEMATHESIS_JUNIT: fuzzReport }, report: { path: fuzzReport, read: countJunit } },
  { name: 'reduced benchmark', args: ['run', '-s', 'bench:ci'] },
];

function run(step: Step): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawn('npm', step.args, { stdio: 'inherit', env: { ...process.env, ...step.env } });
    child.on('error', reject);
    child.on('exit', (code, signal) => resolve(code ?? (signal === null ? 1 : 128)));
  });
}

function readReport(step: Step): TestCounts | undefined {
  if (step.report === undefined) return undefined;
  try {
    return step.report.read(readFileSync(step.report.path, 'utf8'));
  } catch {
    return undefined;
  }
}

async function main(): Promise<number> {
  rmSync(reports, { recursive: true, force: true });
  mkdirSync(reports, { recursive: true });
  let total: TestCounts = { passed: 0, failed: 0, skipped: 0 };
  for (const step of steps) {
    say(`\n[npm test] ${step.name}`);
    const code = await run(step);
    const counts = readReport(step);
    if (counts !== undefined) total = addCounts(total, counts);
    if (code !== 0) {
      // A step that fails without a failed test in its report (typecheck, lint, a crash) still
      // counts as one failure, so the closing line never reads as a clean run.
      if (counts === undefined || counts.failed === 0) total = addCounts(total, { passed: 0, failed: 1, skipped: 0 });
      say(`[npm test] ${step.name} failed (exit ${code}); later steps not run`);
      printTotal(total);
      return code;
    }
    if (step.report !== undefined && counts === undefined) {
      say(`[npm test] ${step.name} wrote no readable report at ${step.report.path}`);
      printTotal(addCounts(total, { passed: 0, failed: 1, skipped: 0 }));
      return 1;
    }
  }
  printTotal(total);
  return total.passed === 0 ? 1 : 0;
}

function printTotal(total: TestCounts): void {
  say(`\ntests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
}

process.exitCode = await main();
