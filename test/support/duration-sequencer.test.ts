import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import type { TestSpecification, Vitest } from 'vitest/node';
import { describe, expect, it } from 'vitest';
import { DURATIONS_FILE, DurationSequencer } from './duration-sequencer.ts';

const root = path.join(import.meta.dirname, '..', '..');
const spec = (file: string) =>
  ({ moduleId: path.join(root, file), project: { name: 'integration' } }) as unknown as TestSpecification;
const sequencer = (cached: Record<string, number> = {}) =>
  new DurationSequencer({
    config: { root },
    cache: {
      getFileTestResults: (key: string) => (key in cached ? { duration: cached[key], failed: false } : undefined),
    },
  } as unknown as Vitest);
const order = async (files: string[], cached?: Record<string, number>) =>
  (await sequencer(cached).sort(files.map(spec))).map(({ moduleId }) => path.relative(root, moduleId));

describe('the duration sequencer', () => {
  const recorded = JSON.parse(readFileSync(DURATIONS_FILE, 'utf8')) as Record<string, number>;

  it('runs the recorded files longest first, whatever their size: the small with-credentials file before the larger, shorter ones', async () => {
    const files = [
      'test/integration/redis.test.ts',
      'test/integration/with-credentials.test.ts',
      'test/integration/access-control.test.ts',
    ];
    const sorted = await order(files);
    expect(sorted).toEqual([...files].sort((a, b) => recorded[b]! - recorded[a]!));
    expect(sorted[0]).toBe('test/integration/with-credentials.test.ts');
  });

  it("prefers the cache's duration of the run before, and puts files neither knows first, larger first", async () => {
    const sorted = await order(
      [
        'test/integration/with-credentials.test.ts',
        'test/integration/redis.test.ts',
        'test/support/duration-sequencer.test.ts',
        'vitest.config.ts',
      ],
      { 'integration:test/integration/redis.test.ts': 10_000_000 },
    );
    const unknown = ['test/support/duration-sequencer.test.ts', 'vitest.config.ts'].sort(
      (a, b) => statSync(path.join(root, b)).size - statSync(path.join(root, a)).size,
    );
    expect(sorted).toEqual([...unknown, 'test/integration/redis.test.ts', 'test/integration/with-credentials.test.ts']);
  });
});
