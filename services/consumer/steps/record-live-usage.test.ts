import { describe, expect, it } from 'vitest';
import type { UsageEventRow } from '../../shared/clickhouse/tables/usage-events.ts';
import { MemoryLiveUsage } from '../../shared/redis/live-usage.ts';
import { recordLiveUsage } from './record-live-usage.ts';

const row = (id: string, session: string, cost: string): UsageEventRow =>
  ({
    id,
    session_id: session,
    provider: 'resemble',
    service: 'tts',
    event_type: 'tts_characters',
    unit: 'character',
    quantity: '100',
    cost,
  }) as UsageEventRow;

describe('recordLiveUsage', () => {
  it("writes each call's stored events as its live entries, cost as the exact string", async () => {
    const live = new MemoryLiveUsage();
    await recordLiveUsage(live, [row('e1', 's1', '0.004'), row('e2', 's2', '0.0000003'), row('e3', 's1', '0.008')]);
    expect((await live.read('s1')).map(({ event_id, cost }) => [event_id, cost])).toEqual([
      ['e1', '0.004'],
      ['e3', '0.008'],
    ]);
    expect(await live.read('s2')).toEqual([
      {
        event_id: 'e2',
        provider: 'resemble',
        service: 'tts',
        event_type: 'tts_characters',
        unit: 'character',
        quantity: '100',
        cost: '0.0000003',
      },
    ]);
  });
});
