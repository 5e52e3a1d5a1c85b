import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { ESLint } from 'eslint';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// The import boundaries of eslint.config.js, run through ESLint's own API on a snippet placed at a
// path: a rule that no longer matched would let every violation through silently.
const ROOT = new URL('../..', import.meta.url).pathname;
const eslint = new ESLint({ cwd: ROOT });

async function restrictedImports(filePath: string, code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath });
  return (result?.messages ?? []).filter((m) => m.ruleId === 'no-restricted-imports').map((m) => m.message);
}

describe('schemas/ is a leaf', () => {
  it('refuses an import of services/ from schemas/', async () => {
    const code = "import { Exact } from '../../services/shared/exact-decimal.ts';\nexport const one = new Exact(1);\n";
    expect(await restrictedImports('schemas/http/probe.ts', code)).toEqual([
      expect.stringContaining('schemas/ is a leaf'),
    ]);
  });

  it('lets schemas/ import schemas/', async () => {
    const code = "import { TOKEN_KINDS } from '../pricing-terms.ts';\nexport const kinds = TOKEN_KINDS;\n";
    expect(await restrictedImports('schemas/http/probe.ts', code)).toEqual([]);
  });
});

describe('the domain modules are imported through their index.ts', () => {
  const deep = "import { priceUsage } from '../domain/pricing/price-usage.ts';\nexport const price = priceUsage;\n";
  const viaIndex = "import { priceUsage } from '../domain/pricing/index.ts';\nexport const price = priceUsage;\n";

  it('refuses a deep import from a service, services/shared and another domain module', async () => {
    for (const filePath of ['services/consumer/probe.ts', 'services/shared/probe.ts', 'services/domain/probe.ts']) {
      expect(await restrictedImports(filePath, deep)).toEqual([expect.stringContaining('through its index.ts')]);
    }
    const fromRecords = "import type { PricedUsage } from '../pricing/price-usage.ts';\nexport type P = PricedUsage;\n";
    expect(await restrictedImports('services/domain/records/probe.ts', fromRecords)).toEqual([
      expect.stringContaining('services/domain/pricing through its index.ts'),
    ]);
    const fromTest =
      "import { journalRecordSink } from '../../services/domain/records/record-sink.ts';\nexport const s = journalRecordSink;\n";
    expect(await restrictedImports('test/support/probe.ts', fromTest)).toEqual([
      expect.stringContaining('services/domain/records through its index.ts'),
    ]);
  });

  it('lets code import the index, and a module its own files', async () => {
    expect(await restrictedImports('services/consumer/probe.ts', viaIndex)).toEqual([]);
    const own = "import { priceUsage } from './price-usage.ts';\nexport const price = priceUsage;\n";
    expect(await restrictedImports('services/domain/pricing/probe.ts', own)).toEqual([]);
    const schema =
      "import { USAGE_LIMITS } from '../../../schemas/records/usage.ts';\nexport const l = USAGE_LIMITS;\n";
    expect(await restrictedImports('services/domain/usage/probe.ts', schema)).toEqual([]);
  });

  it('keeps the service boundary beside the domain rule', async () => {
    const code = "import { startQuery } from '../query/start.ts';\nexport const s = startQuery;\n";
    expect(await restrictedImports('services/consumer/probe.ts', code)).toEqual([
      expect.stringContaining('must not import services/query'),
    ]);
  });
});

// The domain may import services/shared, and parts of services/shared import the domain (a table's row
// type, the audit record), but never both along one chain: that is an import cycle between the layers.
// A path rule cannot see a chain, so this reads the imports themselves.

/** The relative imports (type-only ones too) of every .ts file under `folders`, tests left out, as repository paths. */
function importGraph(folders: readonly string[]): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const folder of folders) {
    for (const entry of readdirSync(path.join(ROOT, folder), { recursive: true, encoding: 'utf8' })) {
      if (!entry.endsWith('.ts') || entry.endsWith('.test.ts')) continue;
      const file = path.posix.join(folder, entry);
      const { importedFiles } = ts.preProcessFile(readFileSync(path.join(ROOT, file), 'utf8'), true, true);
      const relative = importedFiles.map((i) => i.fileName).filter((name) => name.startsWith('.'));
      graph.set(
        file,
        relative.map((name) => path.posix.join(path.posix.dirname(file), name)),
      );
    }
  }
  return graph;
}

const inDomain = (file: string) => file.startsWith('services/domain/');
const inShared = (file: string) => file.startsWith('services/shared/');

/**
 * Every chain domain file > shared file(s) > domain file: a piece of services/shared that the domain
 * imports, directly or through services/shared, and that imports the domain back.
 */
function domainLoopsThroughShared(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const loops: string[] = [];
  for (const [start, imports] of graph) {
    if (!inDomain(start)) continue;
    const seen = new Set<string>();
    const chains = imports.filter(inShared).map((file) => [start, file]);
    for (let chain = chains.pop(); chain !== undefined; chain = chains.pop()) {
      const last = chain.at(-1)!;
      if (seen.has(last)) continue;
      seen.add(last);
      for (const next of graph.get(last) ?? []) {
        if (inDomain(next)) loops.push([...chain, next].join(' > '));
        else if (inShared(next)) chains.push([...chain, next]);
      }
    }
  }
  return loops;
}

describe('no import cycle runs between the domain and services/shared', () => {
  const graph = importGraph(['services/domain', 'services/shared']);

  it('the domain imports nothing of services/shared, directly or through it, that imports the domain back', () => {
    expect(domainLoopsThroughShared(graph)).toEqual([]);
  });

  it('finds such a loop: the records sink imports the Kafka producer, which would import the records module', () => {
    const sink = 'services/domain/records/record-sink.ts';
    const producer = 'services/shared/kafka/batching-producer.ts';
    const sizes = 'services/shared/kafka/record-size.ts';
    expect(graph.get(sink)).toContain(producer);
    expect(graph.get(producer)).toContain(sizes);
    const looped = new Map(graph).set(sizes, [...graph.get(sizes)!, 'services/domain/records/index.ts']);
    expect(domainLoopsThroughShared(looped)).toContain(
      `${sink} > ${producer} > ${sizes} > services/domain/records/index.ts`,
    );
  });
});
