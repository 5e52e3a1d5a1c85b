import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  addIntegrity,
  completeLock,
  entriesWithoutIntegrity,
  LOCKFILE,
  platformOf,
  type Lockfile,
} from './complete-lockfile.ts';

describe('complete-lockfile', () => {
  it('reads os, cpu and libc from platform package names', () => {
    expect(platformOf('@chdb/lib-darwin-arm64')).toEqual({ os: ['darwin'], cpu: ['arm64'] });
    expect(platformOf('@rollup/rollup-linux-x64-musl')).toEqual({ os: ['linux'], cpu: ['x64'], libc: ['musl'] });
    expect(platformOf('@rollup/rollup-android-arm-eabi')).toEqual({ os: ['android'], cpu: ['arm'] });
    expect(platformOf('left-pad')).toBeNull();
  });

  it('adds a skipped-elsewhere entry for each optional platform dependency the lock lacks', () => {
    const lock: Lockfile = {
      packages: {
        '': { name: 'x' },
        'node_modules/chdb': {
          version: '3.4.0',
          optionalDependencies: { '@chdb/lib-linux-x64-gnu': '1.0.0', '@chdb/lib-darwin-arm64': '1.0.0' },
        },
        'node_modules/@chdb/lib-linux-x64-gnu': { version: '1.0.0', optional: true },
      },
    };
    const { lock: completed, added } = completeLock(lock);
    expect(added).toEqual(['@chdb/lib-darwin-arm64']);
    expect(completed.packages['node_modules/@chdb/lib-darwin-arm64']).toEqual({
      version: '1.0.0',
      os: ['darwin'],
      cpu: ['arm64'],
      optional: true,
    });
    expect(Object.keys(completed.packages)[0]).toBe('');
  });

  it('gives every entry without an integrity the one the registry publishes, keeping the ones it has', async () => {
    const lock: Lockfile = {
      packages: {
        '': { name: 'x' },
        'node_modules/linked': { resolved: 'packages/linked', link: true },
        'node_modules/ajv': { version: '8.20.0', integrity: 'sha512-own' },
        'node_modules/@rollup/rollup-win32-x64-msvc': {
          version: '4.68.7',
          cpu: ['x64'],
          optional: true,
          os: ['win32'],
        },
        'node_modules/@chdb/lib-darwin-x64': { version: '1.0.0', cpu: ['x64'], optional: true, os: ['darwin'] },
      },
    };
    const asked: string[] = [];
    const {
      lock: checked,
      filled,
      unknown,
    } = await addIntegrity(lock, (name, version) => {
      asked.push(`${name}@${version}`);
      return Promise.resolve(name.startsWith('@chdb/') ? null : 'sha512-fromRegistry==');
    });
    expect(asked).toEqual(['@rollup/rollup-win32-x64-msvc@4.68.7', '@chdb/lib-darwin-x64@1.0.0']);
    expect([filled, unknown]).toEqual([
      ['node_modules/@rollup/rollup-win32-x64-msvc'],
      ['node_modules/@chdb/lib-darwin-x64'],
    ]);
    expect(checked.packages['node_modules/@rollup/rollup-win32-x64-msvc']).toEqual({
      version: '4.68.7',
      integrity: 'sha512-fromRegistry==',
      cpu: ['x64'],
      optional: true,
      os: ['win32'],
    });
    expect(checked.packages['node_modules/ajv']).toEqual({ version: '8.20.0', integrity: 'sha512-own' });
    expect(entriesWithoutIntegrity(checked)).toEqual(['node_modules/@chdb/lib-darwin-x64']);
  });

  it('finds nothing missing in the committed package-lock.json, and every entry has its integrity (else run npm run lockfile:complete)', () => {
    const lock = JSON.parse(readFileSync(LOCKFILE, 'utf8')) as Lockfile;
    expect(completeLock(lock).added).toEqual([]);
    // The registry mirror knows not even the metadata of chdb's other-platform engines (see complete-lockfile.ts).
    expect(entriesWithoutIntegrity(lock)).toEqual([
      'node_modules/@chdb/lib-darwin-arm64',
      'node_modules/@chdb/lib-darwin-x64',
      'node_modules/@chdb/lib-linux-arm64-gnu',
    ]);
  });

  it('turns off the install telemetry of @scarf/scarf (a dependency of swagger-ui-dist) in the root package.json, where its postinstall looks', () => {
    const manifest = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      scarfSettings?: { enabled?: boolean };
    };
    expect(manifest.scarfSettings).toEqual({ enabled: false });
  });
});
