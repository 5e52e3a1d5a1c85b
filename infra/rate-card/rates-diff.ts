// `npm run rates:diff [-- <version>]`: what upgrading @pydantic/genai-prices (the LLM catalog) to
// <version> (default: the newest on the registry) would change in the prices callmeter applies, for
// the providers the rates API lists: models added and removed, and every price of a token kind that
// changes, now or from a date. Nothing is installed: the candidate is unpacked into a temporary folder
// with `npm pack`, read there, and removed.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import type { findProvider as FindProvider, ModelInfo } from '@pydantic/genai-prices';
import * as installed from '@pydantic/genai-prices';
import { LISTED_LLM_PROVIDERS, LLM_CATALOG_VERSION } from '../../services/domain/pricing/index.ts';

type Prices = Map<string, string>;

/** Every price of a model, flattened: `<start date or "always">/<price key>` → the price as JSON. */
function pricesOf(model: ModelInfo): Prices {
  const entries = Array.isArray(model.prices) ? model.prices : [{ prices: model.prices }];
  const flat: Prices = new Map();
  for (const entry of entries) {
    const constraint =
      'constraint' in entry && entry.constraint !== undefined ? JSON.stringify(entry.constraint) : 'always';
    for (const [key, value] of Object.entries(entry.prices))
      if (value !== undefined) flat.set(`${constraint} ${key}`, JSON.stringify(value));
  }
  return flat;
}

function catalogOf(find: typeof FindProvider): Map<string, Map<string, Prices>> {
  return new Map(
    LISTED_LLM_PROVIDERS.map((id) => [
      id,
      new Map((find({ providerId: id })?.models ?? []).map((model) => [model.id, pricesOf(model)])),
    ]),
  );
}

/** The lines that tell what moving from `before` to `after` changes. */
export function diffCatalogs(
  before: Map<string, Map<string, Prices>>,
  after: Map<string, Map<string, Prices>>,
): string[] {
  const lines: string[] = [];
  for (const provider of LISTED_LLM_PROVIDERS) {
    const [old, next] = [
      before.get(provider) ?? new Map<string, Prices>(),
      after.get(provider) ?? new Map<string, Prices>(),
    ];
    for (const model of [...new Set([...old.keys(), ...next.keys()])].sort()) {
      const [was, becomes] = [old.get(model), next.get(model)];
      if (was === undefined) lines.push(`+ ${provider}:${model} (new model)`);
      else if (becomes === undefined)
        lines.push(`- ${provider}:${model} (no longer priced: its events become unpriced)`);
      else {
        for (const key of [...new Set([...was.keys(), ...becomes.keys()])].sort()) {
          if (was.get(key) !== becomes.get(key))
            lines.push(`~ ${provider}:${model} ${key}: ${was.get(key) ?? '(none)'} -> ${becomes.get(key) ?? '(none)'}`);
        }
      }
    }
  }
  return lines;
}

async function main(): Promise<void> {
  const wanted = process.argv[2] ?? 'latest';
  const folder = mkdtempSync(path.join(tmpdir(), 'genai-prices-'));
  try {
    const tarball = execFileSync(
      'npm',
      ['pack', `@pydantic/genai-prices@${wanted}`, '--silent', '--pack-destination', folder],
      { encoding: 'utf8' },
    )
      .trim()
      .split('\n')
      .pop()!;
    execFileSync('tar', ['-xzf', path.join(folder, tarball), '-C', folder]);
    const candidate = (await import(
      pathToFileURL(path.join(folder, 'package', 'dist', 'index.js')).href
    )) as typeof installed;
    const version = (await import(pathToFileURL(path.join(folder, 'package', 'package.json')).href, {
      with: { type: 'json' },
    })) as { default: { version: string } };
    const lines = diffCatalogs(catalogOf(installed.findProvider), catalogOf(candidate.findProvider));
    process.stdout.write(
      `@pydantic/genai-prices ${LLM_CATALOG_VERSION} -> ${version.default.version}: ${lines.length} change(s) for ${LISTED_LLM_PROVIDERS.join(', ')}\n`,
    );
    for (const line of lines) process.stdout.write(`${line}\n`);
    if (lines.length > 0) process.stdout.write('Stored events keep their cost: an upgrade prices new events only.\n');
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
