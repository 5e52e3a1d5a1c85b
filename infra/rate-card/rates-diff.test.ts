import { describe, expect, it } from 'vitest';
import { diffCatalogs } from './rates-diff.ts';

const catalog = (models: Record<string, Record<string, string>>) =>
  new Map([
    ['openai', new Map(Object.entries(models).map(([model, prices]) => [model, new Map(Object.entries(prices))]))],
  ]);

describe('rates:diff', () => {
  it('names each model added and removed and each price that changes', () => {
    const before = catalog({
      'gpt-a': { 'always input_mtok': '0.15', 'always output_mtok': '0.6' },
      'gpt-gone': { 'always input_mtok': '1' },
    });
    const after = catalog({
      'gpt-a': { 'always input_mtok': '0.1', 'always output_mtok': '0.6', 'always cache_read_mtok': '0.05' },
      'gpt-new': { 'always input_mtok': '2' },
    });
    expect(diffCatalogs(before, after)).toEqual([
      '~ openai:gpt-a always cache_read_mtok: (none) -> 0.05',
      '~ openai:gpt-a always input_mtok: 0.15 -> 0.1',
      '- openai:gpt-gone (no longer priced: its events become unpriced)',
      '+ openai:gpt-new (new model)',
    ]);
    expect(diffCatalogs(before, before)).toEqual([]);
  });
});
