import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../infra/local/free-port.ts';
import { eventually, isolate } from '../support/harness.ts';
import { brokenLinks, documentationPages, links, scriptOf, testedBlocks } from '../support/markdown.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const README_MAX_LINES = 270;

const pages = documentationPages(ROOT);
const read = (page: string) => readFileSync(path.join(ROOT, page), 'utf8');

interface Started {
  readonly url: string;
  readonly child: ChildProcess;
  output(): string;
}

/** `npm start` itself, as the README says to run it, in a process group of its own so that it stops whole. */
async function npmStart(dataDir: string): Promise<Started> {
  const port = await freePort();
  const child = spawn('npm', ['start'], {
    cwd: ROOT,
    detached: true,
    env: {
      PATH: process.env.PATH ?? '',
      HOME: process.env.HOME ?? '',
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  await eventually(async () => {
    if (child.exitCode !== null) throw new Error(`npm start exited with ${child.exitCode}: ${output}`);
    const response = await fetch(`${url}/healthz`);
    if (response.status !== 200) throw new Error(`healthz answered ${response.status}`);
  }, 90_000);
  return { url, child, output: () => output };
}

async function stopGroup(child: ChildProcess): Promise<void> {
  if (child.pid === undefined || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const signal = (name: NodeJS.Signals) => {
    try {
      process.kill(-child.pid!, name);
    } catch {
      // The group has gone already.
    }
  };
  signal('SIGTERM');
  const stuck = setTimeout(() => signal('SIGKILL'), 30_000);
  await exited;
  clearTimeout(stuck);
}

function runBash(script: string, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', script], { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => resolve({ code, output }));
  });
}

describe('the README and docs/', () => {
  let callmeter: Started | undefined;

  beforeAll(async () => {
    callmeter = await npmStart(isolate('docs').dataDir);
  }, 120_000);

  afterAll(async () => {
    if (callmeter) await stopGroup(callmeter.child);
  });

  it(`keep the README to at most ${README_MAX_LINES} lines`, () => {
    expect(read('README.md').split('\n').length).toBeLessThanOrEqual(README_MAX_LINES);
  });

  it('link only to files and headings that exist', () => {
    expect(pages.length).toBeGreaterThan(5);
    expect(pages.flatMap((page) => brokenLinks(ROOT, page))).toEqual([]);
  });

  it('link every page of docs/ from the README', () => {
    const linked = new Set(links(read('README.md')).map((link) => link.target.split('#')[0]));
    expect(pages.filter((page) => page.startsWith('docs/') && !linked.has(page))).toEqual([]);
  });

  it('mark the tour of the README as tested', () => {
    expect(testedBlocks(read('README.md')).length).toBeGreaterThanOrEqual(5);
  });

  it.each(pages.filter((page) => testedBlocks(read(page)).length > 0))(
    'run every block of %s marked sh tested against npm start',
    async (page) => {
      const result = await runBash(scriptOf(page, read(page)), {
        PATH: process.env.PATH ?? '',
        HOME: process.env.HOME ?? '',
        CALLMETER_URL: callmeter!.url,
      });
      expect(result.code, `${result.output}\n--- npm start ---\n${callmeter!.output().slice(-3000)}`).toBe(0);
    },
    60_000,
  );
});
