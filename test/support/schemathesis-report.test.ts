import { describe, expect, it } from 'vitest';
import { onlyHypothesisCrashes } from './schemathesis-report.ts';

const frame = (file: string) => `      File "/venv/site-packages/${file}", line 1, in f\n        f()\n`;
const crash = (operation: string, last: string) =>
  `_________________________ ${operation} __________________________\nRuntime Error\n\nIndex 67 out of range [-56, 56)\n\n    Traceback (most recent call last):\n${frame('schemathesis/engine/run/unit/_hypothesis_executor.py')}${frame('hypothesis/core.py')}${frame(last)}    IndexError: Index 67 out of range [-56, 56)\n\nNeed more help?\n`;
const summary = `\n=================================== WARNINGS ===================================\n\nMissing test data\n`;
const errors = (...sections: string[]) =>
  `     ✅ 35 passed\n\n==================================== ERRORS ====================================\n${sections.join('')}${summary}`;
const failure = `=================================== FAILURES ===================================\n___________________________ GET /api/costs/timeline ____________________________\n1. Test Case ID: KdSENc\n\n- ST101 Server error\n`;

describe("Schemathesis's report", () => {
  it('tells a run whose every error is a crash inside Hypothesis', () => {
    const shrinker = 'hypothesis/internal/conjecture/data.py';
    expect(onlyHypothesisCrashes(errors(crash('DELETE /api/rates/{rate_id}', shrinker)))).toBe(true);
    expect(onlyHypothesisCrashes(errors(crash('GET /a', shrinker), crash('GET /b', shrinker)))).toBe(true);
  });

  it('does not excuse a failed check, an error raised elsewhere, or a run without errors', () => {
    const shrinker = 'hypothesis/internal/conjecture/data.py';
    expect(onlyHypothesisCrashes(`${failure}${errors(crash('GET /a', shrinker))}`)).toBe(false);
    expect(onlyHypothesisCrashes(errors(crash('GET /a', shrinker), crash('GET /b', 'requests/adapters.py')))).toBe(
      false,
    );
    expect(onlyHypothesisCrashes(errors(crash('GET /a', 'schemathesis/checks.py')))).toBe(false);
    expect(onlyHypothesisCrashes(`     ✅ 35 passed\n${summary}`)).toBe(false);
    expect(onlyHypothesisCrashes(errors())).toBe(false);
  });
});
