import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runWorker } from '../support/client-e2e.ts';

// clients/python's pytest suite (the client core against a real HTTP server, the LiveKit forwarder
// and the Pipecat observer with the real livekit-agents and pipecat-ai from PyPI), run in the venv
// the test setup makes (infra/local/ensure-tools.sh), so that `npm test` runs it and counts it.
describe('the Python client (pytest)', () => {
  it('passes every test it collects', async () => {
    const report = path.join(mkdtempSync(path.join(os.tmpdir(), 'callmeter-pytest-')), 'junit.xml');
    // Spawned, not spawnSync: a blocked worker misses vitest's own messages for the minute pytest runs.
    // With this checkout's client first on the path (the venv's editable install may point at another one).
    const run = await runWorker(
      path.join(ROOT, '.local/clients-python/bin/python'),
      ['-m', 'pytest', 'clients/python/tests', '-q', '-p', 'no:cacheprovider', `--junitxml=${report}`],
      240_000,
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.code, output).toBe(0);
    const suite = /<testsuite [^>]*>/.exec(readFileSync(report, 'utf8'))![0];
    const count = (name: string) => Number(new RegExp(`${name}="(\\d+)"`).exec(suite)![1]);
    expect(count('tests'), output).toBeGreaterThanOrEqual(27);
    expect([count('failures'), count('errors'), count('skipped')]).toEqual([0, 0, 0]);
  });
});
