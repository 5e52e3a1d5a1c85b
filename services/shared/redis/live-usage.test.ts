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

  it('keeps at most the cap of entries a call, the newest batch always whole', async () => {
    const live = new MemoryLiveUsage();
    const batch = (from: number, count: number) =>
      Array.from({ length: count }, (_, i) => makeEntry({ event_id: `e${from + i}` }));
    await live.record('s1', batch(0, LIVE_USAGE_MAX_ENTRIES - 10));
    await live.record('s1', batch(1_000, 20));
    const ids = (await live.read('s1')).map((e) => e.event_id);
    expect(ids).toHaveLength(20);
    expect(ids).toContain('e1000');
    await live.record('s1', batch(2_000, LIVE_USAGE_MAX_ENTRIES * 3));
    const capped = (await live.read('s1')).map((e) => e.event_id);
    expect(capped).toHaveLength(LIVE_USAGE_MAX_ENTRIES);
    expect(capped).toContain(`e${2_000 + LIVE_USAGE_MAX_ENTRIES * 3 - 1}`);
  });
});
