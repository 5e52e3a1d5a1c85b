import { describe, expect, it } from 'vitest';
import { LIVE_USAGE_MAX_ENTRIES, LIVE_USAGE_TTL_SECONDS, MemoryLiveUsage, type LiveUsageEntry } from './live-usage.ts';

function makeEntry(overrides: Partial<LiveUsageEntry> = {}): LiveUsageEntry {
  return {
    event_id: 'e1',
    provider: 'deepgram',
    service: 'stt',
    event_type: 'stt_minutes',
    unit: 'minute',
    quantity: '1',
    cost: '0.0077',
    ...overrides,
  };
}

describe('MemoryLiveUsage', () => {
  it('keeps one entry per event however often it is recorded', async () => {
    const live = new MemoryLiveUsage();
    await live.record('s1', [makeEntry(), makeEntry({ event_id: 'e2' })]);
    await live.record('s1', [makeEntry()]);
    expect((await live.read('s1')).map((e) => e.event_id).sort()).toEqual(['e1', 'e2']);
    expect(await live.read('other')).toEqual([]);
  });

  it('forgets sessions idle for longer than the TTL', async () => {
    let now = 0;
    const live = new MemoryLiveUsage(() => now);
    await live.record('old', [makeEntry()]);
    now = (LIVE_USAGE_TTL_SECONDS + 1) * 1000;
    await live.record('new', [makeEntry()]);
    expect(await live.read('old')).toEqual([]);
  });

  it("keeps a call's newest entries in two generations of at most the cap each, the older dropped when the newer fills", async () => {
    const live = new MemoryLiveUsage();
    const batch = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => makeEntry({ event_id: `e${from + i}` }));
    const ids = async () => (await live.read('s1')).map((e) => e.event_id);
    await live.record('s1', batch(0, LIVE_USAGE_MAX_ENTRIES - 10));
    await live.record('s1', batch(1_000, 20));
    expect(await ids()).toHaveLength(LIVE_USAGE_MAX_ENTRIES + 10);
    expect(await ids()).toEqual(expect.arrayContaining(['e0', 'e1000']));
    // A batch past the cap keeps its newest cap of entries; the generation before it becomes the older.
    await live.record('s1', batch(2_000, LIVE_USAGE_MAX_ENTRIES * 3));
    expect(await ids()).toHaveLength(LIVE_USAGE_MAX_ENTRIES + 20);
    expect(await ids()).toEqual(expect.arrayContaining(['e1000', `e${2_000 + LIVE_USAGE_MAX_ENTRIES * 3 - 1}`]));
    expect(await ids()).not.toContain('e0');
    await live.record('s1', batch(5_000, 5));
    expect(await ids()).toHaveLength(LIVE_USAGE_MAX_ENTRIES + 5);
    expect(await ids()).not.toContain('e1000');
  });
});
