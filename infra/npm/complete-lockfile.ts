// The npm registry reachable from the development machines is a partial mirror: it does not serve
// some platform packages of other operating systems (chdb's macOS and arm64 engines, rollup's
// non-linux-x64 binaries). npm then leaves them out of package-lock.json, and `npm ci` rejects that
// lockfile ("Missing: … from lock file"). This adds the entries a complete registry would have
// written: name, version, the os/cpu/libc that make every other platform skip them, and the
// integrity the registry's metadata publishes for that version (the mirror serves rollup's metadata
// though not its tarballs), so that a machine that does install one checks what it downloaded. The
// mirror serves not even the metadata of chdb's other-platform engines: those entries stay without
// integrity (listed by the run), and npm on such a machine checks the tarball against the integrity
// of the registry's metadata it fetches, as for any entry without one.
// Run after any `npm install` that changed dependencies: `npm run lockfile:complete`; a unit test
// fails while the lockfile lacks an entry or an entry lacks its integrity.
import { execFile } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';

const PLATFORM =
  /-(android|darwin|freebsd|linux|openbsd|openharmony|win32)-(arm|arm64|ia32|loong64|ppc64|riscv64|s390x|x64)(?:-(gnu|musl|msvc|eabi|gnueabihf|musleabihf))?$/;

interface LockEntry {
  readonly version?: string;
  readonly dev?: boolean;
  readonly link?: boolean;
  readonly integrity?: string;
  readonly optionalDependencies?: Readonly<Record<string, string>>;
  readonly [key: string]: unknown;
}
export interface Lockfile {
  readonly packages: Readonly<Record<string, LockEntry>>;
  readonly [key: string]: unknown;
}
type Platform = { os: string[]; cpu: string[]; libc?: string[] };
/** The registry's `dist.integrity` of one published version; null when the registry does not know it. */
export type IntegrityOf = (name: string, version: string) => Promise<string | null>;

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
      if (platform === null)
        throw new Error(`${name} (optional dependency of ${location}) is missing and names no platform`);
      packages[`node_modules/${name}`] = { version, ...platform, ...(entry.dev ? { dev: true } : {}), optional: true };
      added.push(name);
    }
  }
  const sorted = Object.fromEntries(
    Object.entries(packages).sort(([a], [b]) => (a === '' ? -1 : b === '' ? 1 : a.localeCompare(b))),
  );
  return { lock: { ...lock, packages: sorted }, added };
}

/** The locations of installed packages that carry no integrity hash (the root and links have none to carry). */
export function entriesWithoutIntegrity(lock: Lockfile): string[] {
  return Object.entries(lock.packages)
    .filter(([location, entry]) => location !== '' && entry.link !== true && entry.integrity === undefined)
    .map(([location]) => location);
}

/**
 * Adds the registry's integrity to every entry that lacks one, right after its version as npm writes it;
 * `unknown` are the entries whose version the registry does not know.
 */
export async function addIntegrity(
  lock: Lockfile,
  integrityOf: IntegrityOf,
): Promise<{ lock: Lockfile; filled: string[]; unknown: string[] }> {
  const packages: Record<string, LockEntry> = { ...lock.packages };
  const filled: string[] = [];
  const unknown: string[] = [];
  for (const location of entriesWithoutIntegrity(lock)) {
    const { version, ...rest } = packages[location] ?? {};
    if (version === undefined) throw new Error(`${location} has no version to look its integrity up by`);
    const integrity = await integrityOf(
      location.slice(location.lastIndexOf('node_modules/') + 'node_modules/'.length),
      version,
    );
    if (integrity === null) {
      unknown.push(location);
      continue;
    }
    packages[location] = { version, integrity, ...rest };
    filled.push(location);
  }
  return { lock: { ...lock, packages }, filled, unknown };
}

const npmIntegrity: IntegrityOf = async (name, version) => {
  const viewed = await promisify(execFile)('npm', ['view', `${name}@${version}`, 'dist.integrity']).catch(
    (error: unknown) => {
      // A package the registry does not know is an E404; a version it does not know exits 1 with no output.
      if (error instanceof Error && 'stderr' in error && 'stdout' in error) {
        const [stderr, stdout] = [String(error.stderr), String(error.stdout)];
        if (stderr.includes('E404') || (stderr.trim() === '' && stdout.trim() === '')) return null;
      }
      throw error;
    },
  );
  if (viewed === null) return null;
  const integrity = viewed.stdout.trim();
  if (!/^sha512-[A-Za-z0-9+/]+=*$/.test(integrity))
    throw new Error(`the registry gave no sha512 integrity for ${name}@${version}`);
  return integrity;
};

export const LOCKFILE = new URL('../../package-lock.json', import.meta.url);

if (import.meta.url === `file://${process.argv[1]}`) {
  const file = LOCKFILE;
  const { lock, added } = completeLock(JSON.parse(readFileSync(file, 'utf8')) as Lockfile);
  const { lock: checked, filled, unknown } = await addIntegrity(lock, npmIntegrity);
  writeFileSync(file, `${JSON.stringify(checked, null, 2)}\n`);
  process.stdout.write(
    `complete-lockfile: added ${added.length} platform entries, ${filled.length} integrity hashes\n`,
  );
  if (unknown.length > 0)
    process.stdout.write(
      `complete-lockfile: the registry does not know ${unknown.join(', ')}: left without integrity\n`,
    );
}
