// The npm registry reachable from the development machines is a partial mirror: it does not serve
// some platform packages of other operating systems (chdb's macOS and arm64 engines, rollup's
// non-linux-x64 binaries). npm then leaves them out of package-lock.json, and `npm ci` rejects that
// lockfile ("Missing: … from lock file"). This adds the entries a complete registry would have
// written: name, version and the os/cpu/libc that make every other platform skip them.
// Run after any `npm install` that changed dependencies: `npm run lockfile:complete`; a unit test
// fails while the lockfile lacks an entry.
import { readFileSync, writeFileSync } from 'node:fs';

const PLATFORM = /-(android|darwin|freebsd|linux|openbsd|openharmony|win32)-(arm|arm64|ia32|loong64|ppc64|riscv64|s390x|x64)(?:-(gnu|musl|msvc|eabi|gnueabihf|musleabihf))?$/;

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly [key: string]: unknown;
}
export interface Lockfile {
  readonly packages: Readonly<Record<string, LockEntry>>;
  readonly [key: string]: unknown;
}
type Platform = { os: string[]; cpu: string[]; libc?: string[] };

export function platformOf(name: string): Platform | null {
  const match = PLATFORM.exec(name);
  if (match === null) return null;
  const [, os = '', cpu = '', abi] = match;
  const libc = abi === 'gnu' || abi === 'gnueabihf' ? 'glibc' : abi === 'musl' || abi === 'musleabihf' ? 'musl' : null;
  return { os: [os], cpu: [cpu], ...(libc === null ? {} : { libc: [libc] }) };
}

/** Returns the lock with the missing optional platform entries added, and the names added. */
export function completeLock(lock: Lockfile): { lock: Lockfile; added: string[] } {
  const packages: Record<string, LockEntry> = { ...lock.packages };
  const added: string[] = [];
  for (const [location, entry] of Object.entries(lock.packages)) {
    for (const [name, version] of Object.entries(entry.optionalDependencies ?? {})) {
      const nested = `${location}/node_modules/${name}`;
      if (packages[nested] !== undefined || packages[`node_modules/${name}`] !== undefined) continue;
      const platform = platformOf(name);
      if (platform === null) throw new Error(`${name} (optional dependency of ${location}) is missing and names no platform`);
      packages[`node_modules/${name}`] = { version, ...platform, ...(entry.dev ? { dev: true } : {}), optional: true };
      added.push(name);
    }
  }
  const sorted = Object.fromEntries(Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))));
  return { lock: { ...lock, packages: sorted }, added };
}

export const LOCKFILE = new URL('../../package-lock.json', import.meta.url);

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = LOCKFILE;
  const { lock, added } = completeLock(JSON.parse(readFileSync(file, 'utf8')) as Lockfile);
  writeFileSync(file, `${JSON.stringify(lock, null, 2)}\n`);
  process.stdout.write(`complete-lockfile: added ${added.length} platform entries\n`);
}
