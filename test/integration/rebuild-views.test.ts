import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULT_RATE_CARD_URL, loadRateCard, type RateCard } from '../../services/domain/pricing/index.ts';
import { createRecordWriter, type SourcedEnvelope } from '../../services/consumer/record-writer.ts';
import { rebuildViews } from '../../services/consumer/rebuild-views.ts';
import type { EventClaims } from '../../services/consumer/usage/event-claims.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { makeEnvelope } from '../../services/domain/records/index.ts';
import type { UsageRecord } from '../../services/domain/records/index.ts';
import { MemoryLiveUsage } from '../../services/shared/redis/live-usage.ts';
import { isolate, testConfig } from '../support/harness.ts';
import { makeSessionEnvelope } from '../support/records.ts';
import { expectedTotals, expectSessionsCountedOnce, storedTotals } from '../support/rollups.ts';

const USER = 'rebuild-user';
const log = createLogger('silent');

/** The Redis claims' rule in memory: the first token to claim an id keeps it, and so does its replay. */
function memoryClaims(): EventClaims {
  const owners = new Map<string, string>();
  return {
    claim: async (ids, token) => {
      const kept = new Set<string>();
      const fresh = new Set<string>();
      for (const id of ids) {
        if (!owners.has(id)) {
          owners.set(id, token);
          fresh.add(id);
        }
        if (owners.get(id) === token) kept.add(id);
      }
      return { kept, fresh };
    },
    release: async (ids, token) => {
      for (const id of ids) if (owners.get(id) === token) owners.delete(id);
    },
  };
}

/** A batch of `count` text-to-speech events of 100 characters (0.004 each at the default card's 0.00004). */
function usageBatch(sessionId: string, count: number): SourcedEnvelope[] {
  const now = new Date().toISOString();
  return Array.from({ length: count }, (_, i) => {
    const record: UsageRecord = {
      event_id: randomUUID(),
      session_id: sessionId,
      user_id: USER,
      agent_id: 'agent-1',
      provider: 'resemble',
      event_type: 'tts_characters',
      model: null,
      quantity: '100',
      input_tokens: null,
      output_tokens: null,
      reported_unit_cost: null,
      reported_total_cost: null,
      occurred_at: now,
      received_at: now,
    };
    const envelope = makeEnvelope(
      'usage',
      sessionId,
      record,
      new Date(),
      new Date(),
      record.event_id as `${string}-${string}-${string}-${string}-${string}`,
    );
    return { envelope, source: { partition: 0, offset: String(i) } };
  });
}

describe('rebuilding the materialized views after a crash of the embedded engine', () => {
  let ch: ClickHouse;
  let card: RateCard;
  const sessionId = randomUUID();
  const claims = memoryClaims();
  const writerWith = (pending: ReadonlySet<string>) =>
    createRecordWriter({
      ch,
      reads: ch,
      log,
      card,
      claims,
      liveUsage: new MemoryLiveUsage(),
      deadLetterTopic: null,
      pendingReplays: { has: (token) => pending.has(token), id: randomUUID() },
    });

  beforeAll(async () => {
    ch = await createClickHouse(testConfig(isolate('rebuild-views')));
    await migrate(ch, log);
    card = await loadRateCard(DEFAULT_RATE_CARD_URL);
    const session = makeSessionEnvelope({
      id: sessionId,
      user_id: USER,
      status: 'ACTIVE',
      agent_id: 'agent-1',
      agent_name: 'Ada',
    });
    await writerWith(new Set()).storeEnvelopes(
      [{ envelope: session, source: { partition: 0, offset: '0' } }],
      'rebuild:sessions:0-0',
    );
  });

  afterAll(async () => {
    await ch?.client.close();
  });

  it('makes every view hold exactly what its source holds, and each replayed batch counted once in every one', async () => {
    const usage = (table: string) => `${ch.database}.${table}`;
    const stored = usageBatch(sessionId, 30);
    const interrupted = usageBatch(sessionId, 10);
    const neverStored = usageBatch(sessionId, 20);
    await writerWith(new Set()).storeEnvelopes(stored, 'rebuild:usage:0-29');
    // What a SIGKILL in the middle of an insert can leave: the source and some views hold the batch,
    // one view neither holds it nor remembers its token (its deduplication log would take it again).
    await ch.client.command({ query: `DETACH TABLE ${usage('usage_rollup_15m_mv')}` });
    await writerWith(new Set()).storeEnvelopes(interrupted, 'rebuild:usage:30-39');
    await ch.client.command({ query: `ATTACH TABLE ${usage('usage_rollup_15m_mv')}` });
    // ...and views with a block twice, or without any.
    await ch.client.command({
      query: `INSERT INTO ${usage('usage_totals_daily')} SELECT * FROM ${usage('usage_totals_daily')}`,
      clickhouse_settings: { insert_deduplicate: 0 },
    });
    await ch.client.command({ query: `TRUNCATE TABLE ${usage('usage_by_session')}` });
    await ch.client.command({ query: `TRUNCATE TABLE ${usage('usage_event_ids_by_user')}` });
    await ch.client.command({ query: `TRUNCATE TABLE ${usage('agent_names')}` });
    expect((await storedTotals(ch)).usage_rollup_15m).toEqual({ n: '30', cost: '0.12' });

    await rebuildViews(ch, log);
    expect(await storedTotals(ch)).toEqual(expectedTotals(40, '0.16'));
    const names = await (
      await ch.client.query({
        query: `SELECT agent_name FROM ${usage('agent_names')} WHERE user_id = {user:String}`,
        query_params: { user: USER },
        format: 'JSONEachRow',
      })
    ).json();
    expect(names).toEqual([{ agent_name: 'Ada' }]);
    // Written by column name, as the views write: the strings land in their own columns.
    const lines = await (
      await ch.client.query({
        query: `SELECT provider, service, event_type, unit FROM ${usage('usage_by_session')} GROUP BY ALL`,
        format: 'JSONEachRow',
      })
    ).json();
    expect(lines).toEqual([{ provider: 'resemble', service: 'tts', event_type: 'tts_characters', unit: 'character' }]);

    // The group replays its planned batches: stored before the crash, interrupted, and never stored.
    const replaying = writerWith(new Set(['rebuild:usage:0-29', 'rebuild:usage:30-39', 'rebuild:usage:40-59']));
    await replaying.storeEnvelopes(stored, 'rebuild:usage:0-29');
    await replaying.storeEnvelopes(interrupted, 'rebuild:usage:30-39');
    await replaying.storeEnvelopes(neverStored, 'rebuild:usage:40-59');
    expect(await storedTotals(ch)).toEqual(expectedTotals(60, '0.24'));
    await expectSessionsCountedOnce(ch);
  });
});
