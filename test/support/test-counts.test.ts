import { describe, expect, it } from 'vitest';
import { countJunit } from './test-counts.js';

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
