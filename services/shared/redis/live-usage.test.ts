import { describe, expect, it } from 'vitest';
import { LIVE_USAGE_TTL_SECONDS, MemoryLiveUsage, type LiveUsageEntry } from './live-usage.ts';

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
});
