/**
 * A run whose only problems are crashes inside Hypothesis's own engine (its shrinker, while it optimises
 * the examples Schemathesis targets): no failure section, and every error a runtime error whose traceback
 * ends in Hypothesis's internals. That says nothing about callmeter, so test/fuzz runs it once more with
 * the next seed; a failure of any check, or any other error, fails the test at once.
 */
export function onlyHypothesisCrashes(output: string): boolean {
  if (output.includes('=== FAILURES ===')) return false;
  const errors = output.split('=== ERRORS ===')[1]?.split(/\n=+ [A-Z ]+ =+\n/)[0];
  if (errors === undefined) return false;
  const sections = errors.split(/\n_{5,} .+ _{5,}\n/).slice(1);
  return (
    sections.length > 0 &&
    sections.every((section) => {
      const frames = [...section.matchAll(/File "([^"]+)"/g)].map((match) => match[1]!);
      return (
        section.startsWith('Runtime Error') && frames.length > 0 && frames.at(-1)!.includes('/hypothesis/internal/')
      );
    })
  );
}
