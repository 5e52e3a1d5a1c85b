import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT, runWorker } from '../support/client-e2e.ts';
import { clientPackages } from '../support/client-packages.ts';

// clients/python's pytest suite (the client core against a real HTTP server, the LiveKit forwarder
// and the Pipecat observer with the real livekit-agents and pipecat-ai from PyPI), run against the
// package as a user installs it: the wheel `python -m build` made, with its extras, in a fresh venv
// (test/support/client-packages-setup.ts), so that `npm test` runs it and counts it.
describe('the Python client (pytest), installed from its wheel', () => {
  it('passes every test it collects, importing callmeter from the venv, not from clients/python/src', async () => {
    const report = path.join(mkdtempSync(path.join(os.tmpdir(), 'callmeter-pytest-')), 'junit.xml');
    // Spawned, not spawnSync: a blocked worker misses vitest's own messages for the minute pytest runs.
    const run = await runWorker(
      clientPackages().python,
      ['-m', 'pytest', 'clients/python/tests', '-q', '-p', 'no:cacheprovider', `--junitxml=${report}`],
      240_000,
      ROOT,
      // tests/test_package.py checks where callmeter was imported from when told it is the installed one.
      { ...process.env, CALLMETER_TEST_PACKAGE: 'installed' },
    );
    const output = `${run.stdout}\n${run.stderr}`;
    expect(run.code, output).toBe(0);
    const junit = readFileSync(report, 'utf8');
    const suite = /<testsuite [^>]*>/.exec(junit)![0];
    const count = (name: string) => Number(new RegExp(`${name}="(\\d+)"`).exec(suite)![1]);
    expect(count('tests'), output).toBeGreaterThanOrEqual(31);
    expect([count('failures'), count('errors'), count('skipped')]).toEqual([0, 0, 0]);
    expect(junit).toContain('name="test_callmeter_is_imported_from_the_installed_wheel"');
  });

  it('builds an sdist with the sources, the type marker and the whole test suite', () => {
    const { sdist } = clientPackages();
    const listing = spawnSync('tar', ['-tzf', sdist], { encoding: 'utf8' });
    expect(listing.status, listing.stderr).toBe(0);
    const top = path.basename(sdist, '.tar.gz');
    const files = new Set(listing.stdout.split('\n').map((line) => line.replace(`${top}/`, '')));
    for (const file of [
      'pyproject.toml',
      'README.md',
      'src/callmeter/__init__.py',
      'src/callmeter/livekit.py',
      'src/callmeter/pipecat.py',
      'src/callmeter/py.typed',
      'tests/conftest.py',
      'tests/e2e_worker.py',
    ])
      expect(files, file).toContain(file);
  });
});
