import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from '../../services/domain/pricing/index.ts';
import { createRecordWriter, type RecordWriter } from '../../services/consumer/record-writer.ts';
import { costBreakdown, MAX_LISTED_EVENTS } from '../../services/query/cost-breakdown.ts';
import { costSummary } from '../../services/query/cost-summary.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { makeEnvelope } from '../../services/domain/records/index.ts';
import type { UsageRecord } from '../../services/domain/records/index.ts';
import { MemoryLiveUsage } from '../../services/shared/redis/live-usage.ts';
import { isolate, testConfig } from '../support/harness.ts';
import { makeSessionEnvelope } from '../support/records.ts';

const USER = 'live-user';

function makeUsageRecord(sessionId: string, overrides: Partial<UsageRecord> = {}): UsageRecord {
  const now = new Date().toISOString();
  return {
    event_id: randomUUID(),
    session_id: sessionId,
    user_id: USER,
    agent_id: 'agent-1',
    provider: 'resemble',
    event_type: 'tts_characters',
    model: null,
    quantity: '1000',
    input_tokens: null,
    output_tokens: null,
    reported_unit_cost: null,
    reported_total_cost: null,
    occurred_at: now,
    received_at: now,
    ...overrides,
  };
}

describe('live cost of calls in progress', () => {
  const log = createLogger('warn');
  let ch: ClickHouse;
  let writer: RecordWriter;
  const liveUsage = new MemoryLiveUsage();
  const sessionId = randomUUID();

  beforeAll(async () => {
    ch = await createClickHouse(testConfig(isolate('live-cost')));
    await migrate(ch, log);
    writer = createRecordWriter({
      ch,
      reads: ch,
      log,
      card: await loadRateCard(DEFAULT_RATE_CARD_URL),
      claims: null,
      liveUsage,
      deadLetterTopic: null,
    });
    const usage = [makeUsageRecord(sessionId), makeUsageRecord(sessionId, { quantity: '250' })];
    const envelopes = [
      makeSessionEnvelope({ id: sessionId, user_id: USER, status: 'ACTIVE' }),
      ...usage.map((record) =>
        makeEnvelope(
          'usage',
          sessionId,
          record,
          new Date(),
          new Date(),
          record.event_id as `${string}-${string}-${string}-${string}-${string}`,
        ),
      ),
    ];
    await writer.storeEnvelopes(
      envelopes.map((envelope) => ({ envelope, source: { partition: -1, offset: '-1' } })),
      `live-${sessionId}`,
    );
  });

  afterAll(async () => {
    await ch?.client.close();
  });

  it('counts the stored events of ACTIVE sessions in the summary, from ClickHouse', async () => {
    const summary = await costSummary(ch, USER, 'UTC', Date.now());
    // 1,250 characters at 0.00004
    expect(summary.live_cost).toBe('0.05');
    expect(summary.total_cost).toBe('0.05');
  });

  it("unions a call's live entries with its stored events by event id in the breakdown: a pending entry once, a stored one never twice", async () => {
    const stored = await liveUsage.read(sessionId);
    expect(stored).toHaveLength(2);
    const pending = {
      event_id: randomUUID(),
      provider: 'resemble',
      service: 'tts',
      event_type: 'tts_characters' as const,
      unit: 'character',
      quantity: '10',
      cost: '0.0004',
    };
    await liveUsage.record(sessionId, [pending, stored[0]!]);
    const breakdown = await costBreakdown(ch, liveUsage, sessionId, USER);
    expect(breakdown).toMatchObject({ live: true, total_cost: '0.0504' });
    expect(breakdown.items).toEqual([
      {
        provider: 'resemble',
        service: 'tts',
        event_type: 'tts_characters',
        quantity: '1260',
        unit: 'character',
        cost: '0.0504',
        // The stored events' part, and the pending entry's, not stored yet, so without parts of its own.
        parts: [
          { dimension: 'quantity', unit: 'character', quantity: '1250', cost: '0.05' },
          { dimension: 'pending', unit: 'character', quantity: '10', cost: '0.0004' },
        ],
      },
    ]);
  });

  it('looks the unlisted live entries up among the stored events when the breakdown lists only the first 10,000', async () => {
    const longCall = randomUUID();
    const usage = Array.from({ length: MAX_LISTED_EVENTS + 5 }, () => makeUsageRecord(longCall, { quantity: '10' }));
    const envelopes = [
      makeSessionEnvelope({ id: longCall, user_id: USER, status: 'ACTIVE' }),
      ...usage.map((record) =>
        makeEnvelope(
          'usage',
          longCall,
          record,
          new Date(),
          new Date(),
          record.event_id as `${string}-${string}-${string}-${string}-${string}`,
        ),
      ),
    ];
    await writer.storeEnvelopes(
      envelopes.map((envelope) => ({ envelope, source: { partition: -1, offset: '-1' } })),
      `live-${longCall}`,
    );
    const pending = {
      event_id: randomUUID(),
      provider: 'resemble',
      service: 'tts',
      event_type: 'tts_characters' as const,
      unit: 'character',
      quantity: '10',
      cost: '0.0004',
    };
    await liveUsage.record(longCall, [pending]);

    const breakdown = await costBreakdown(ch, liveUsage, longCall, USER);
    expect(breakdown.events).toHaveLength(MAX_LISTED_EVENTS);
    expect(breakdown.events_truncated).toBe(true);
    // 10,005 stored events and one pending, 10 characters each at 0.00004: every stored one once,
    // the listed and the unlisted alike, though the live counters hold all of them.
    expect(breakdown).toMatchObject({ total_cost: '4.0024', event_count: MAX_LISTED_EVENTS + 6 });
  });
});
