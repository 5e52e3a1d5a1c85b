import { existsSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { PendingReplays } from './pending-replays.ts';

describe('the replays pending after a rebuild of the views', () => {
  it('holds every planned batch after a rebuild, hands the uncommitted ones to the next process, and forgets those committed past', () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'replays-'));
    const file = path.join(dir, 'clickhouse.replays.json');
    expect(PendingReplays.saved(dir)).toBe(false);
    const first = PendingReplays.open(dir, { rebuilt: true, planned: new Set(['a', 'b']) });
    expect(PendingReplays.saved(dir)).toBe(true);
    expect([first.has('a'), first.has('b'), first.size]).toEqual([true, true, 2]);
    first.committed('a');
    expect(first.has('a')).toBe(false);

    // A clean restart: no rebuild; of what the group plans now, only what was still pending counts.
    const second = PendingReplays.open(dir, { rebuilt: false, planned: new Set(['b', 'c']) });
    expect([second.has('b'), second.has('c'), second.size]).toEqual([true, false, 1]);
    expect(second.id).not.toBe(first.id);
    second.committed('b');
    expect(existsSync(file)).toBe(false);

    // A plan the group no longer holds was committed past by someone: it is dropped.
    PendingReplays.open(dir, { rebuilt: true, planned: new Set(['d']) });
    expect(PendingReplays.open(dir, { rebuilt: false, planned: new Set() }).size).toBe(0);
    expect(existsSync(file)).toBe(false);
  });
});
