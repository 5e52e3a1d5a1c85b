import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { completeLock, LOCKFILE, platformOf, type Lockfile } from './complete-lockfile.ts';

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
        'node_modules/chdb': { version: '3.4.0', optionalDependencies: { '@chdb/lib-linux-x64-gnu': '1.0.0', '@chdb/lib-darwin-arm64': '1.0.0' } },
        'node_modules/@chdb/lib-linux-x64-gnu': { version: '1.0.0', optional: true },
      },
    };
    const { lock: completed, added } = completeLock(lock);
    expect(added).toEqual(['@chdb/lib-darwin-arm64']);
    expect(completed.packages['node_modules/@chdb/lib-darwin-arm64']).toEqual({ version: '1.0.0', os: ['darwin'], cpu: ['arm64'], optional: true });
    expect(Object.keys(completed.packages)[0]).toBe('');
  });

  it('finds nothing missing in the committed package-lock.json (else run npm run lockfile:complete)', () => {
    const lock = JSON.parse(readFileSync(LOCKFILE, 'utf8')) as Lockfile;
    expect(completeLock(lock).added).toEqual([]);
  });
});
