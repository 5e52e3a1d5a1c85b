import { describe, expect, it } from 'vitest';
import { benchSettings } from './settings.ts';

describe('bench settings', () => {
  it('repeats each phase three times in the full run and once in CI', () => {
    expect(benchSettings({}).runs).toBe(3);
    expect(benchSettings({ BENCH_MODE: 'ci' }).runs).toBe(1);
  });

  it('takes another number of rounds from BENCH_RUNS, and refuses one that is not a whole number', () => {
    expect(benchSettings({ BENCH_RUNS: '5' }).runs).toBe(5);
    expect(benchSettings({ BENCH_MODE: 'ci', BENCH_RUNS: '2' }).runs).toBe(2);
    expect(() => benchSettings({ BENCH_RUNS: '0' })).toThrow(/BENCH_RUNS=0/);
    expect(() => benchSettings({ BENCH_RUNS: 'three' })).toThrow(/BENCH_RUNS=three/);
  });

  it('runs the whole benchmark unless a phase is named', () => {
    expect(benchSettings({}).phase).toBe('all');
    expect(benchSettings({ BENCH_PHASE: 'budgets' }).phase).toBe('budgets');
  });
});
