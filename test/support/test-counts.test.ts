import { describe, expect, it } from 'vitest';
import { countJunit, countVitest } from './test-counts.js';

// Trimmed from what vitest 3.2's JSON reporter wrote for one file that failed to load and one file
// with a failed, a passed, a skipped and a todo test.
const vitestReport = {
  numFailedTestSuites: 4,
  numPassedTests: 1,
  numFailedTests: 1,
  numPendingTests: 1,
  numTodoTests: 1,
  testResults: [
    { name: '/t/broken.test.ts', status: 'failed', assertionResults: [] },
    { name: '/t/fail.test.ts', status: 'failed', assertionResults: [{}, {}, {}, {}] },
  ],
};

describe('countVitest', () => {
  it('counts failed tests and each file that failed to load, skipped and todo tests as skipped', () => {
    expect(countVitest(JSON.stringify(vitestReport))).toEqual({ passed: 1, failed: 2, skipped: 2 });
  });

  it('rejects a report without counts rather than reading it as zero', () => {
    expect(() => countVitest(JSON.stringify({ testResults: [] }))).toThrow(/numPassedTests/);
  });
});

describe('countJunit', () => {
  it('sums the testsuite elements, not the testsuites wrapper', () => {
    const xml = `<?xml version="1.0"?>
<testsuites errors="1" failures="2" skipped="1" tests="20">
  <testsuite name="a" errors="1" failures="1" skipped="1" tests="12"><testcase name="x"/></testsuite>
  <testsuite name="b" errors="0" failures="1" skipped="0" tests="8"></testsuite>
</testsuites>`;
    expect(countJunit(xml)).toEqual({ passed: 16, failed: 3, skipped: 1 });
  });

  it('rejects a report with no testsuite', () => {
    expect(() => countJunit('<testsuites tests="3"></testsuites>')).toThrow(/no <testsuite>/);
  });
});
