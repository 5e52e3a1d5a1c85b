import { defineConfig } from 'vitest/config';

// Two projects: unit tests sit next to the code and touch no network; integration tests
// live in test/ and run against the real Kafka broker, Redis and the ClickHouse engine,
// started once per run by the global setup. The embedded ClickHouse engine binds one data
// folder per process, so integration files run in forked processes, never threads.
export default defineConfig({
  test: {
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    projects: [
      {
        test: {
          name: 'unit',
          include: ['services/**/*.test.ts', 'infra/**/*.test.ts', 'schemas/**/*.test.ts', 'test/support/**/*.test.ts'],
          environment: 'node',
        },
      },
      {
        test: {
          name: 'integration',
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          globalSetup: ['test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // The fault suite runs its own Kafka broker and Redis, because it stops and restarts them.
        test: {
          name: 'faults',
          include: ['test/faults/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          testTimeout: 600_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
