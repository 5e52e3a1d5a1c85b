import { execFile } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type {} from 'vitest';
import type { Plugin } from 'vitest/config';
import type { TestProject } from 'vitest/node';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The development venv (infra/local/ensure-tools.sh): it holds `build`, and nothing of it is tested. */
const DEV_PYTHON = path.join(ROOT, '.local/clients-python/bin/python');
/** A wheel of every pin in constraints.txt, made by ensure-tools: installs need no index and no download. */
const WHEELHOUSE = path.join(ROOT, '.local/clients-python-wheels');
const CONSTRAINTS = path.join(ROOT, 'clients/python/constraints.txt');
const TS_CLIENT = path.join(ROOT, 'clients/typescript');
const TS_WORKERS = ['e2e-worker.ts', 'e2e-spool-worker.ts'];
/** Where the clients project's in-place tests import @callmeter/client from (vitest.config.ts). */
export const NPM_PROJECT_ENV = 'CALLMETER_CLIENT_NPM_PROJECT';

/** The clients as a user installs them, built and installed once per test run. */
export interface ClientPackages {
  readonly wheel: string;
  readonly sdist: string;
  /** A fresh venv's python, with the wheel and its [livekit,pipecat,test] extras installed from the wheelhouse. */
  readonly python: string;
  /** The `callmeter` command the wheel installed in that venv. */
  readonly callmeterCommand: string;
  readonly tarball: string;
  /** A fresh npm project with the tarball installed, and the e2e workers copied in as its own code. */
  readonly npmProject: string;
}

declare module 'vitest' {
  export interface ProvidedContext {
    clientPackages: ClientPackages;
  }
}

const run = promisify(execFile);

export default async function setup(project: TestProject): Promise<() => void> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'callmeter-client-packages-'));
  const started = Date.now();
  const seconds = (since: number) => `${((Date.now() - since) / 1000).toFixed(1)} s`;
  const [python, typescript] = await Promise.all([
    installPythonClient(dir).then((done) => ({ ...done, took: seconds(started) })),
    installTypeScriptClient(dir).then((done) => ({ ...done, took: seconds(started) })),
  ]);
  process.stderr.write(
    `[client packages] built and installed in ${seconds(started)} (wheel and venv ${python.took}, npm package ${typescript.took})\n`,
  );
  process.env[NPM_PROJECT_ENV] = typescript.npmProject;
  // The fresh venv is byte-compiled by its first imports: a machine that sets PYTHONDONTWRITEBYTECODE
  // would have every Python process of the run compile livekit and openai again (about 1.6 s each).
  delete process.env.PYTHONDONTWRITEBYTECODE;
  project.provide('clientPackages', {
    wheel: python.wheel,
    sdist: python.sdist,
    python: python.python,
    callmeterCommand: python.callmeterCommand,
    tarball: typescript.tarball,
    npmProject: typescript.npmProject,
  });
  return () => rmSync(dir, { recursive: true, force: true });
}

/** `python -m build` (sdist, then the wheel from the sdist), then a fresh venv with the wheel installed. */
async function installPythonClient(dir: string) {
  if (!existsSync(WHEELHOUSE) || !readdirSync(WHEELHOUSE).some((name) => name.startsWith('.complete-')))
    throw new Error(`no wheelhouse at ${WHEELHOUSE}: run bash infra/local/ensure-tools.sh`);
  const dist = path.join(dir, 'python-dist');
  // The build's isolated environment gets setuptools from the wheelhouse too.
  const offline = { ...process.env, PIP_NO_INDEX: '1', PIP_FIND_LINKS: WHEELHOUSE, PIP_DISABLE_PIP_VERSION_CHECK: '1' };
  await run(DEV_PYTHON, ['-m', 'build', '--outdir', dist, path.join(ROOT, 'clients/python')], { env: offline });
  const [wheel, sdist] = [builtFile(dist, '.whl'), builtFile(dist, '.tar.gz')];
  const venv = path.join(dir, 'venv');
  await run(DEV_PYTHON, ['-m', 'venv', '--without-pip', venv]);
  const python = path.join(venv, 'bin/python');
  // The development venv's pip installs into the new one (--python); byte-compiling is left to the first
  // import (setup() lets the run's Python processes write it).
  const install = ['-m', 'pip', '--python', python, 'install', '-q', '--no-compile', '--no-index'];
  await run(DEV_PYTHON, [...install, '--find-links', WHEELHOUSE, '-c', CONSTRAINTS, `${wheel}[livekit,pipecat,test]`], {
    env: offline,
  }).catch((error: Error & { stderr?: string }) => {
    throw new Error(
      `installing ${wheel} from ${WHEELHOUSE} failed (bash infra/local/ensure-tools.sh?)\n${error.stderr}`,
    );
  });
  return { wheel, sdist, python, callmeterCommand: path.join(venv, 'bin/callmeter') };
}

/** `npm pack` (its prepack builds dist/ with tsc), then a fresh npm project with the tarball installed. */
async function installTypeScriptClient(dir: string) {
  // npm's own settings of the run that started vitest (npm test) are not the fresh project's.
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('npm_')));
  const packed = path.join(dir, 'npm-pack');
  mkdirSync(packed);
  await run('npm', ['pack', '--silent', '--pack-destination', packed], { cwd: TS_CLIENT, env });
  const tarball = builtFile(packed, '.tgz');
  const npmProject = path.join(dir, 'npm-project');
  mkdirSync(npmProject);
  writeFileSync(
    path.join(npmProject, 'package.json'),
    JSON.stringify({ name: 'callmeter-client-user', private: true, type: 'module' }),
  );
  await run('npm', ['install', '--offline', '--no-audit', '--no-fund', '--silent', tarball], { cwd: npmProject, env });
  // @livekit/agents is the user's (an optional peer dependency): this repository's copy, linked as an
  // application's own would be installed, so that the tests and the package share one instance of it.
  mkdirSync(path.join(npmProject, 'node_modules/@livekit'), { recursive: true });
  const agents = realpathSync(path.join(ROOT, 'node_modules/@livekit/agents'));
  symlinkSync(agents, path.join(npmProject, 'node_modules/@livekit/agents'), 'dir');
  for (const worker of TS_WORKERS)
    cpSync(path.join(TS_CLIENT, 'test', worker), path.join(npmProject, 'test', worker), { recursive: true });
  return { tarball, npmProject };
}

/** The one file in `dir` whose name ends with `suffix` (what a build made there). */
function builtFile(dir: string, suffix: string): string {
  const name = readdirSync(dir).find((file) => file.endsWith(suffix));
  if (name === undefined) throw new Error(`no *${suffix} in ${dir}`);
  return path.join(dir, name);
}

/**
 * Resolves '@callmeter/client' and its subpaths as if imported from the fresh npm project, through the
 * installed package's `exports`: the clients project's in-place tests run the packed build, not src/.
 */
export function installedTypeScriptClient(): Plugin {
  const name = '@callmeter/client';
  return {
    name: 'callmeter-installed-typescript-client',
    enforce: 'pre',
    async resolveId(source, _importer, options) {
      if (source !== name && !source.startsWith(`${name}/`)) return null;
      const npmProject = process.env[NPM_PROJECT_ENV];
      if (!npmProject) throw new Error(`${source}: installed by the global setup of vitest's clients project only`);
      // As imported by a file of the project (one that exists: vite resolves from an importer's folder only then).
      const importer = path.join(npmProject, 'package.json');
      const resolved = await this.resolve(source, importer, { ...options, skipSelf: true });
      if (resolved === null) throw new Error(`${source} is not in the installed package (${npmProject})`);
      return resolved;
    },
  };
}
