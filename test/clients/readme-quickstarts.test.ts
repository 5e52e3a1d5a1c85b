import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Exact } from '../../services/shared/exact-decimal.ts';
import { call } from '../support/api.ts';
import { startCallmeter, type CallmeterProcess } from '../support/callmeter-process.ts';
import { ROOT, type Summary } from '../support/client-e2e.ts';
import { clientPackages, userScript } from '../support/client-packages.ts';
import { eventually, isolate } from '../support/harness.ts';

// Each client README opens with quickstarts. Each is run here as written: the fenced block is taken from
// the README and run by the installed package, with the framework's own classes, against the embedded
// callmeter (in AUTH_MODE=on, so the quickstart's key is used). What it says it sent must be counted
// exactly once, and priced.
const KEY = 'readme-quickstarts-admin-key-0123456789abcd';
const TENANT = 'tenant-42';
const run = promisify(execFile);

let server: CallmeterProcess;
beforeAll(async () => {
  const isolation = isolate('readme-quickstarts');
  server = await startCallmeter({
    DATA_DIR: isolation.dataDir,
    LOG_LEVEL: 'warn',
    AUTH_MODE: 'on',
    ADMIN_API_KEY: KEY,
  });
});
afterAll(async () => {
  await server?.stop();
});

/** The first fenced block of `language` in the README's section `## {heading}`. */
function quickstart(readme: string, heading: string, language: string): string {
  const text = readFileSync(path.join(ROOT, readme), 'utf8');
  const start = text.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`${readme} has no section "## ${heading}"`);
  const section = text.slice(start + 1).split('\n## ')[0]!;
  const block = new RegExp(`\`\`\`${language}\\n([\\s\\S]*?)\\n\`\`\``).exec(section);
  if (block === null) throw new Error(`${readme}, "## ${heading}": no \`\`\`${language} block`);
  return `${block[1]}\n`;
}

async function summary(): Promise<Summary> {
  const answer = await call<Summary>(server.url, 'GET', '/api/costs/summary', undefined, {
    authorization: `Bearer ${KEY}`,
    'x-user-id': TENANT,
  });
  if (answer.status !== 200) throw new Error(`summary ${answer.status} ${answer.text}`);
  return answer.body;
}

/** Runs a quickstart; expects it to print the client's stats, and the server to count what it sent, priced. */
async function expectCountedOnce(command: string, args: string[], cwd: string): Promise<void> {
  const before = await summary();
  const env = { ...process.env, CALLMETER_URL: server.url, CALLMETER_API_KEY: KEY };
  const { stdout } = await run(command, args, { cwd, env, timeout: 120_000 });
  const sent = /\bsent'?: (\d+)/.exec(stdout);
  expect(sent, stdout).not.toBeNull();
  const events = Number(sent![1]);
  expect(events).toBeGreaterThan(0);
  const after = await eventually(async () => {
    const now = await summary();
    if (now.event_count < before.event_count + events) throw new Error(`${now.event_count} events`);
    return now;
  }, 30_000);
  expect(after.event_count).toBe(before.event_count + events);
  expect(after.unpriced_event_count).toBe(0);
  expect(new Exact(after.total_cost).gt(new Exact(before.total_cost))).toBe(true);
}

describe('the Python README quickstarts, run as written with the installed wheel', () => {
  for (const framework of ['LiveKit', 'Pipecat']) {
    it(`Quickstart: ${framework}`, async () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), 'callmeter-quickstart-'));
      const script = path.join(dir, `quickstart_${framework.toLowerCase()}.py`);
      writeFileSync(script, quickstart('clients/python/README.md', `Quickstart: ${framework}`, 'python'));
      await expectCountedOnce(clientPackages().python, [script], dir);
    });
  }
});

describe('the TypeScript README quickstart, run as written with the installed package', () => {
  it('Quickstart: LiveKit Agents for Node (type-checked against the package declarations, then run)', async () => {
    const { npmProject } = clientPackages();
    writeFileSync(
      path.join(npmProject, 'quickstart.ts'),
      quickstart('clients/typescript/README.md', 'Quickstart: LiveKit Agents for Node', 'ts'),
    );
    // Were the declarations missing, every import would be `any`: then these directives are unused, an error.
    writeFileSync(
      path.join(npmProject, 'declarations.ts'),
      [
        "import { Callmeter } from '@callmeter/client';",
        "import { UsageForwarder } from '@callmeter/client/livekit';",
        "const meter = new Callmeter({ baseUrl: 'http://127.0.0.1:9' });",
        '// @ts-expect-error: a Callmeter needs its baseUrl',
        'new Callmeter({});',
        '// @ts-expect-error: the stats are counts',
        'export const pending: string = meter.stats().pending;',
        '// @ts-expect-error: a forwarder needs its call',
        'new UsageForwarder(meter, {});',
        '',
      ].join('\n'),
    );
    writeFileSync(
      path.join(npmProject, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          noEmit: true,
          skipLibCheck: true,
          types: ['node'],
          typeRoots: [path.join(ROOT, 'node_modules/@types')],
        },
        files: ['quickstart.ts', 'declarations.ts'],
      }),
    );
    const tsc = path.join(ROOT, 'node_modules/typescript/bin/tsc');
    const checked = await run(process.execPath, [tsc, '-p', npmProject], { cwd: npmProject }).catch(
      (error: { stdout: string }) => ({ stdout: error.stdout, failed: true }),
    );
    expect(checked, checked.stdout).not.toHaveProperty('failed');
    const quickstartRun = userScript('quickstart.ts');
    await expectCountedOnce(quickstartRun.command, quickstartRun.args, quickstartRun.cwd);
  });
});
