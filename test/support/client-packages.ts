import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { inject } from 'vitest';
import type { ClientPackages } from './client-packages-setup.ts';

/** The installed clients of this run (the clients project's global setup). */
export function clientPackages(): ClientPackages {
  return inject('clientPackages');
}

/**
 * How to run a TypeScript file of the npm project as a user's code: node with tsx, from the project's
 * folder, so that '@callmeter/client' is the installed package (this repository's tsconfig not in sight).
 */
export function userScript(file: string): { command: string; args: string[]; cwd: string } {
  const { npmProject } = clientPackages();
  const tsx = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;
  return { command: process.execPath, args: ['--import', tsx, path.join(npmProject, file)], cwd: npmProject };
}
