import { describe, expect, it } from 'vitest';
import { createLogger } from '../../shared/logger.ts';
import { UnpricedWarnings } from './unpriced-warnings.ts';

describe('UnpricedWarnings', () => {
  it('warns once an hour per provider, model and event type, and never for priced rows', () => {
    const lines: unknown[] = [];
    const log = createLogger('warn');
    const spy = {
      ...log,
      warn: (fields: unknown, message: string) => lines.push([fields, message]),
    } as unknown as typeof log;
    let now = 0;
    const warnings = new UnpricedWarnings(spy, () => now);
    const row = (provider: string, model: string, cost_source = 'unpriced') => ({
      provider,
      model,
      event_type: 'tts_characters' as const,
      cost_source,
    });
    warnings.noteStored([row('acme', 'v1'), row('acme', 'v1'), row('acme', 'v2'), row('resemble', '', 'computed')]);
    expect(lines.map((line) => (line as [{ provider: string; model: string | null }])[0])).toEqual([
      { provider: 'acme', model: 'v1', event_type: 'tts_characters' },
      { provider: 'acme', model: 'v2', event_type: 'tts_characters' },
    ]);
    now = 3_599_999;
    warnings.noteStored([row('acme', 'v1')]);
    expect(lines).toHaveLength(2);
    now = 3_600_000;
    warnings.noteStored([row('acme', 'v1'), row('other', '')]);
    expect(lines.map((line) => (line as [{ provider: string; model: string | null }])[0])).toEqual([
      { provider: 'acme', model: 'v1', event_type: 'tts_characters' },
      { provider: 'acme', model: 'v2', event_type: 'tts_characters' },
      { provider: 'acme', model: 'v1', event_type: 'tts_characters' },
      { provider: 'other', model: null, event_type: 'tts_characters' },
    ]);
  });
});
