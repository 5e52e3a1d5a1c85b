import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PYTHON_SRC, ROOT } from '../support/client-e2e.ts';

// clients/python's pytest suite (the client core against a real HTTP server, the LiveKit forwarder
// and the Pipecat observer with the real livekit-agents and pipecat-ai from PyPI), run in the venv
// the test setup makes (infra/local/ensure-tools.sh), so that `npm test` runs it and counts it.
describe('the Python client (pytest)', () => {
  it('passes every test it collects', () => {
    const report = path.join(mkdtempSync(path.join(os.tmpdir(), 'callmeter-pytest-')), 'junit.xml');
    const run = spawnSync(
      path.join(ROOT, '.local/clients-python/bin/python'),
      ['-m', 'pytest', 'clients/python/tests', '-q', '-p', 'no:cacheprovider', `--junitxml=${report}`],
      // This checkout's client, also where the venv's editable install points at another checkout.
      { cwd: ROOT, encoding: 'utf8', timeout: 240_000, env: { ...process.env, PYTHONPATH: PYTHON_SRC } },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.status, output).toBe(0);
    const suite = /<testsuite [^>]*>/.exec(readFileSync(report, 'utf8'))![0];
    const count = (name: string) => Number(new RegExp(`${name}="(\\d+)"`).exec(suite)![1]);
    expect(count('tests'), output).toBeGreaterThanOrEqual(27);
    expect([count('failures'), count('errors'), count('skipped')]).toEqual([0, 0, 0]);
  });
});
