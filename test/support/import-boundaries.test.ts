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
