import { describe, expect, it } from 'vitest';
import { datedName, steadyTable } from './results.ts';
import { combineRounds } from './rounds.ts';

describe('results files', () => {
  it('names a dated run by its start in UTC, to the minute', () => {
    const startedAt = Date.UTC(2026, 10, 27, 6, 12, 45);
    expect(datedName(startedAt)).toBe('2026-11-27T0612Z');
    expect(datedName(startedAt, 'noisy-neighbour')).toBe('2026-11-27T0612Z-noisy-neighbour');
  });

  it('shows the median, the range, the ratio and its range, the target and the runs, marking unsteady figures', () => {
    const round = (single: number, bare: number) => [
      {
        name: 'ingest_single_events_per_s',
        value: single,
        unit: 'events/s',
        baseline: bare,
        ratio: Math.round((single / bare) * 100) / 100,
        target: '>= 0.4',
      },
      { name: 'ingest_rss_mb', value: 498, unit: 'MiB' },
    ];
    const table = steadyTable(combineRounds([round(3400, 17000), round(1900, 9000), round(3300, 16000)]));
    expect(table[0]).toBe(
      '| metric | value (median) | min–max | baseline | ratio (median) | ratio min–max | target | runs |',
    );
    expect(table[2]).toBe(
      '| ingest_single_events_per_s | 3300 events/s ⚠ | 1900–3400 | 16000 | 0.21 | 0.2–0.21 | >= 0.4 | 3 |',
    );
    expect(table[3]).toBe('| ingest_rss_mb | 498 MiB | 498 |  |  |  |  | 3 |');
    expect(table.at(-1)).toContain('exceeds 25 %');
    const [once] = steadyTable(combineRounds([round(3323, 16698)])).slice(2);
    expect(once).toBe('| ingest_single_events_per_s | 3323 events/s |  | 16698 | 0.2 |  | >= 0.4 | 1 |');
  });
});
