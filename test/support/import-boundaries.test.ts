import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

// The import boundaries of eslint.config.js, run through ESLint's own API on a snippet placed at a
// path: a rule that no longer matched would let every violation through silently.
const eslint = new ESLint({ cwd: new URL('../..', import.meta.url).pathname });

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
