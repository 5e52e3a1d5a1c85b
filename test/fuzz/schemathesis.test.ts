import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { onlyHypothesisCrashes } from '../support/schemathesis-report.ts';
import { countJunit } from '../support/test-counts.ts';

const script = path.resolve(import.meta.dirname, 'schemathesis.sh');

function runScript(env: Record<string, string>): Promise<{ code: number; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', [script], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.stderr.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code: code ?? 1, output: Buffer.concat(chunks).toString('utf8') }));
  });
}

/**
 * `npm run test:fuzz` as a test: Schemathesis against the OpenAPI document of the embedded process
 * (every operation; no 5xx, every answer as the document describes it, the process healthy after).
 * Its console report stays in the failure message; the counts come from its JUnit report.
 */
describe('Schemathesis against the running process', () => {
  const folder = mkdtempSync(path.join(os.tmpdir(), 'callmeter-schemathesis-'));
  afterAll(() => rmSync(folder, { recursive: true, force: true }));

  it('finds no failure in any operation, and leaves the process healthy', async () => {
    const junit = path.join(folder, 'schemathesis.xml');
    const seed = Number(process.env.SCHEMATHESIS_SEED ?? 1);
    let { code, output } = await runScript({ SCHEMATHESIS_JUNIT: junit, SCHEMATHESIS_SEED: String(seed) });
    if (code !== 0 && onlyHypothesisCrashes(output)) {
      process.stderr.write(`test:fuzz: Hypothesis crashed inside its engine; running again with seed ${seed + 1}\n`);
      ({ code, output } = await runScript({ SCHEMATHESIS_JUNIT: junit, SCHEMATHESIS_SEED: String(seed + 1) }));
    }
    expect(code, output).toBe(0);
    expect(output).toContain('test:fuzz: callmeter healthy after the run');
    const counts = countJunit(readFileSync(junit, 'utf8'));
    expect(counts.failed, output).toBe(0);
    expect(counts.passed).toBeGreaterThanOrEqual(15);
  });
});
