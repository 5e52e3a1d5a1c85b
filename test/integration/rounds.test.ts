import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import type { KafkaMessage } from 'kafkajs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Round, RoundMember } from '../../services/consumer/round.ts';
import { batchToken, roundToken } from '../../services/consumer/offset-plan.ts';
import { createRecordWriter, type RecordWriter } from '../../services/consumer/record-writer.ts';
import { RedisEventClaims } from '../../services/consumer/usage/event-claims.ts';
import { createClickHouse, type ClickHouse } from '../../services/shared/clickhouse/client.ts';
import { migrate } from '../../services/shared/clickhouse/migrate.ts';
import { createLogger } from '../../services/shared/logger.ts';
import { DEFAULT_RATE_CARD_URL, loadRateCard } from '../../services/domain/pricing/index.ts';
import { encodeRecord, makeEnvelope } from '../../services/domain/records/index.ts';
import type { UsageRecord } from '../../services/domain/records/index.ts';
import { MemoryLiveUsage } from '../../services/shared/redis/live-usage.ts';
import { isolate, testConfig } from '../support/harness.ts';
import { makeUsageRecord } from '../support/records.ts';
import { expectedTotals, expectSessionsCountedOnce, storedTotals } from '../support/rollups.ts';

const USER = 'rounds-user';
const TOPIC = 'usage';
const log = createLogger('silent');

/** A text-to-speech event of 100 characters: 0.004 at the default card's 0.00004 a character. */
const usageRecord = (sessionId: string, eventId: string = randomUUID()): UsageRecord =>
  makeUsageRecord({ session_id: sessionId, user_id: USER, event_id: eventId });

/** A batch of one partition as kafkajs hands it over: its records at offsets from `first`. */
function member(partition: number, first: number, records: readonly UsageRecord[], uncertain = false): RoundMember {
  const messages = records.map((record, i) => {
    const { key, value, headers } = encodeRecord(
      makeEnvelope('usage', record.session_id, record, new Date(), new Date()),
    );
    return {
      key: Buffer.from(key),
      value: Buffer.from(value),
      headers,
      offset: String(first + i),
      timestamp: String(Date.now()),
      attributes: 0,
    } as unknown as KafkaMessage;
  });
  const last = String(first + records.length - 1);
  return {
    topic: TOPIC,
    partition,
    messages,
    token: batchToken('rounds', TOPIC, partition, String(first), last),
    uncertain,
  };
}

const round = (members: readonly RoundMember[], id = randomUUID().replaceAll('-', '').slice(0, 16)): Round => ({
  members,
  token: roundToken('rounds', TOPIC, id),
});

describe('rounds: one insert per table for the batches of several partitions', () => {
  const isolation = isolate('rounds');
  const config = testConfig(isolation);
  const redis = new Redis(config.redis!.url);
  const claimKey = (key: string) => `${isolation.keyPrefix}usage-claim:${key}`;
  let ch: ClickHouse;
  let writer: RecordWriter;
  const sessionId = randomUUID();
  // Every event costs 0.004: the totals of every table usage_events feeds, after `n` events stored once.
  const once = (n: number) => expectedTotals(n, (n * 0.004).toFixed(3).replace(/\.?0+$/, ''));

  beforeAll(async () => {
    ch = await createClickHouse(config);
    await migrate(ch, log);
    writer = createRecordWriter({
      ch,
      reads: ch,
      log,
      card: await loadRateCard(DEFAULT_RATE_CARD_URL),
      claims: new RedisEventClaims(redis, claimKey),
      liveUsage: new MemoryLiveUsage(),
      deadLetterTopic: null,
    });
  });

  afterAll(async () => {
    await ch.client.close();
    redis.disconnect();
  });

  it('stores the batches of three partitions once, and a replay of the whole round under its token adds nothing', async () => {
    const batches = [0, 1, 2].map((p) => member(p, 0, [usageRecord(sessionId), usageRecord(sessionId)]));
    const whole = round(batches);
    await writer.handleRound(whole);
    expect(await storedTotals(ch)).toEqual(once(6));
    await writer.handleRound(whole);
    expect(await storedTotals(ch)).toEqual(once(6));
    await expectSessionsCountedOnce(ch, 1);
  });

  it('replays members regrouped out of their round (uncertain): what was stored is not stored again, the rest once', async () => {
    const stored = member(3, 0, [usageRecord(sessionId), usageRecord(sessionId), usageRecord(sessionId)]);
    const neverStored = member(4, 0, [usageRecord(sessionId), usageRecord(sessionId)]);
    // Partition 3's batch went in with a round that stored and was not committed past.
    await writer.handleRound(round([stored, member(5, 0, [usageRecord(sessionId)])]));
    expect(await storedTotals(ch)).toEqual(once(10));
    // After a rebalance partitions 3 and 4 come back to a consumer that cannot replay that round whole.
    await writer.handleRound(
      round([
        { ...stored, uncertain: true },
        { ...neverStored, uncertain: true },
      ]),
    );
    expect(await storedTotals(ch)).toEqual(once(12));
    await expectSessionsCountedOnce(ch, 1);
  });

  it('lets go of the claims its own token holds only, whoever asks', async () => {
    const claims = new RedisEventClaims(redis, claimKey);
    const [k1, k2, k3] = [randomUUID(), randomUUID(), randomUUID()].map((id) => `${id}:release-tenant`);
    expect((await claims.claim([k1!, k2!], 'token-a')).fresh).toEqual(new Set([k1, k2]));
    expect(await claims.claim([k2!, k3!], 'token-b')).toEqual({ kept: new Set([k3]), fresh: new Set([k3]) });
    await claims.release([k1!, k2!, k3!], 'token-b');
    expect((await redis.keys(claimKey('*:release-tenant'))).sort()).toEqual([claimKey(k1!), claimKey(k2!)].sort());
    await claims.release([k1!, k2!], 'token-a');
    expect(await redis.keys(claimKey('*:release-tenant'))).toEqual([]);
  });

  it('counts an event once when two batches of one round hold its id, and once again when the stored round is replayed without its claims', async () => {
    const shared = randomUUID();
    const first = member(6, 0, [usageRecord(sessionId, shared), usageRecord(sessionId)]);
    const second = member(7, 0, [usageRecord(sessionId, shared)]);
    const both = round([first, second]);
    await writer.handleRound(both);
    expect(await storedTotals(ch)).toEqual(once(14));
    // A stored round lets its claims go: Redis keeps no key per event.
    expect(await redis.keys(claimKey('*'))).toEqual([]);
    // A replay (its commit lost) claims afresh, and the stored-id lookup leaves out what is stored.
    await writer.handleRound(both);
    await writer.handleRound(
      round([
        { ...first, uncertain: true },
        { ...second, uncertain: true },
      ]),
    );
    expect(await storedTotals(ch)).toEqual(once(14));
    await expectSessionsCountedOnce(ch, 1);
  });

  it('marks a new session once, on its earliest row of the round that first stores it, whatever replays and later rounds follow', async () => {
    const session = randomUUID();
    const at = (ms: number) => ({ ...usageRecord(session), occurred_at: new Date(Date.now() - ms).toISOString() });
    const [late, early, other] = [at(1_000), at(60_000), at(30_000)];
    const first = round([member(8, 0, [late!, early!]), member(9, 0, [other!])]);
    await writer.handleRound(first);
    const marked = async () =>
      (
        await (
          await ch.client.query({
            query: `SELECT toString(id) AS marked FROM ${ch.database}.usage_events WHERE session_id = {session:UUID} AND session_first = 1`,
            query_params: { session },
            format: 'JSONEachRow',
          })
        ).json<{ marked: string }>()
      ).map((row) => row.marked);
    expect(await marked()).toEqual([early!.event_id]);
    // A replay of the stored round (its claims released, its commit lost), regrouped or whole, and a later round.
    await writer.handleRound(first);
    await writer.handleRound(round([{ ...first.members[0]!, uncertain: true }]));
    await writer.handleRound(round([member(8, 2, [at(120_000)])]));
    expect(await marked()).toEqual([early!.event_id]);
    expect(await storedTotals(ch)).toEqual(once(18));
    await expectSessionsCountedOnce(ch, 2);
  });
});
