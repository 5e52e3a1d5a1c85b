import { defineConfig } from 'vitest/config';
import { installedTypeScriptClient } from './test/support/client-packages-setup.ts';
import { DurationSequencer } from './test/support/duration-sequencer.ts';

// Six projects in four groups, run one after another (sequence.groupOrder) by one `vitest run`, so
// that its closing summary counts every test: unit tests sit next to the code and touch no network;
// integration tests live in test/ and run against the real Kafka broker, Redis and the ClickHouse
// engine, started once per run by the global setup; the client libraries (clients/) are tested
// against the real agent frameworks and the embedded process, and the Schemathesis fuzzer runs against
// an embedded process of its own beside them (one group: neither shares a server with the other), with
// the embedded journal's faults; the fault suite comes last, alone, because it kills and restarts brokers
// and the processes around them.
// The embedded ClickHouse engine binds one data folder per process, so files that use it run in
// forked processes, never threads. Each project's temporary files go under one folder removed when
// the run ends (test/support/temp-root-setup.ts; KEEP_TEST_DATA=1 keeps it). Each group runs its
// longest files first (test/support/duration-sequencer.ts).
export default defineConfig({
  test: {
    poolOptions: { forks: { maxForks: 2, minForks: 1 } },
    sequence: { sequencer: DurationSequencer },
    projects: [
      {
        test: {
          name: 'unit',
          sequence: { groupOrder: 0 },
          include: [
            'services/**/*.test.ts',
            'infra/**/*.test.ts',
            'schemas/**/*.test.ts',
            'test/support/**/*.test.ts',
            'bench/**/*.test.ts',
          ],
          environment: 'node',
          globalSetup: ['test/support/temp-root-setup.ts'],
          // The property-based tests run thousands of cases (about 5 s for the request fuzzer on this
          // machine, idle): vitest's default 5 s failed them on a busy machine, not on a wrong answer.
          testTimeout: 30_000,
        },
      },
      {
        test: {
          name: 'integration',
          sequence: { groupOrder: 1 },
          include: ['test/integration/**/*.test.ts'],
          environment: 'node',
          pool: 'forks',
          globalSetup: ['test/support/temp-root-setup.ts', 'test/support/global-setup.ts'],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
      {
        // clients/typescript's own tests, clients/python's pytest run from test/clients, and both
        // clients end to end against the embedded process (no Kafka: their guarantees are the client's).
        // All of them run the clients as packages: the global setup builds the wheel and the npm tarball
        // and installs them in a fresh venv and npm project, and '@callmeter/client' resolves there.
        plugins: [installedTypeScriptClient()],
        test: {
          name: 'clients',
          sequence: { groupOrder: 2 },
          include: ['clients/typescript/**/*.test.ts', 'test/clients/**/*.test.ts'],
          exclude: ['**/node_modules/**'],
          environment: 'node',
          pool: 'forks',
          globalSetup: ['test/support/temp-root-setup.ts', 'test/support/client-packages-setup.ts'],
          testTimeout: 300_000,
          hookTimeout: 120_000,
        },
      },
      {
        test: {
          name: 'fuzz',
          sequence: { groupOrder: 2 },
          include: ['test/fuzz/**/*.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/temp-root-setup.ts'],
          pool: 'forks',
          testTimeout: 600_000,
        },
      },
      {
        // The embedded journal's faults (one embedded process killed, restarted and refused its inserts):
        // no broker or Redis of its own, so it runs in the clients' group, beside their tests and the fuzzer.
        test: {
          name: 'journal-faults',
          sequence: { groupOrder: 2 },
          include: ['test/faults/embedded-journal.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/temp-root-setup.ts'],
          pool: 'forks',
          testTimeout: 600_000,
          hookTimeout: 300_000,
        },
      },
      {
        // The fault suite and the scale-out test run their own Kafka broker and Redis, because they stop
        // and restart them or kill the processes around them; one file at a time (one fork), because each
        // loads the machine with a broker, Redis and several callmeter processes of its own.
        test: {
          name: 'faults',
          sequence: { groupOrder: 4 },
          include: ['test/faults/**/*.test.ts'],
          exclude: ['test/faults/embedded-journal.test.ts'],
          environment: 'node',
          globalSetup: ['test/support/temp-root-setup.ts'],
          pool: 'forks',
          poolOptions: { forks: { singleFork: true } },
          testTimeout: 600_000,
          hookTimeout: 300_000,
        },
      },
    ],
  },
});
