// Test counts read from the runners' reports, for the closing line of `npm test`.
export interface TestCounts {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
}

export function addCounts(a: TestCounts, b: TestCounts): TestCounts {
  return { passed: a.passed + b.passed, failed: a.failed + b.failed, skipped: a.skipped + b.skipped };
}

function count(value: unknown, field: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) {
    throw new Error(`test report: ${field} is not a count`);
  }
  return value;
}

/** vitest's JSON reporter (Jest's shape): numPassedTests, numFailedTests, numPendingTests, numTodoTests. */
export function countVitest(text: string): TestCounts {
  const report = JSON.parse(text) as Record<string, unknown>;
  return {
    passed: count(report.numPassedTests, 'numPassedTests'),
    failed: count(report.numFailedTests, 'numFailedTests') + countBrokenFiles(report.testResults),
    skipped: count(report.numPendingTests, 'numPendingTests') + count(report.numTodoTests, 'numTodoTests'),
  };
}

// A test file that fails to load runs no test, so numFailedTests leaves it out; it counts as one failure.
function countBrokenFiles(files: unknown): number {
  if (!Array.isArray(files)) throw new Error('test report: testResults is not a list');
  return files.filter((file: { status?: unknown; assertionResults?: unknown }) =>
    file.status === 'failed' && Array.isArray(file.assertionResults) && file.assertionResults.length === 0).length;
}

function attribute(tag: string, name: string): number {
  const match = new RegExp(`\\s${name}="(\\d+)"`).exec(tag);
  return match === null ? 0 : Number(match[1]);
}

/** A JUnit XML report: the attributes of its <testsuite> elements, summed. */
export function countJunit(text: string): TestCounts {
  const suites = text.match(/<testsuite\s[^>]*>/g) ?? [];
  if (suites.length === 0) throw new Error('test report: no <testsuite> in the JUnit report');
  let total: TestCounts = { passed: 0, failed: 0, skipped: 0 };
  for (const tag of suites) {
    const tests = attribute(tag, 'tests');
    const failed = attribute(tag, 'failures') + attribute(tag, 'errors');
    const skipped = attribute(tag, 'skipped');
    total = addCounts(total, { passed: Math.max(tests - failed - skipped, 0), failed, skipped });
  }
  return total;
}
