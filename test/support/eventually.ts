/**
 * Polls until check() stops throwing, for at most timeoutMs; the last failure is rethrown. Kept apart
 * from harness.ts (which reads vitest's state) so that the benchmark can start test equipment with it.
 */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 15_000, intervalMs = 100): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  }
}
