// Test counts read from a JUnit report (Schemathesis writes one), so a test can assert on them.
export interface TestCounts {
  readonly passed: number;
  readonly failed: number;
  readonly skipped: number;
}

function attribute(tag: string, name: string): number {
  const match = new RegExp(`\\s${name}="(\\d+)"`).exec(tag);
  return match === null ? 0 : Number(match[1]);
}

/** A JUnit XML report: the attributes of its <testsuite> elements, summed. */
export function countJunit(text: string): TestCounts {
  const suites = text.match(/<testsuite\s[^>]*>/g) ?? [];
  if (suites.length === 0) throw new Error('test report: no <testsuite> in the JUnit report');
  let passed = 0;
  let failed = 0;
  let skipped = 0;
  for (const tag of suites) {
    const tests = attribute(tag, 'tests');
    const suiteFailed = attribute(tag, 'failures') + attribute(tag, 'errors');
    const suiteSkipped = attribute(tag, 'skipped');
    passed += Math.max(tests - suiteFailed - suiteSkipped, 0);
    failed += suiteFailed;
    skipped += suiteSkipped;
  }
  return { passed, failed, skipped };
}
