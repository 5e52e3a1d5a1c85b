import type { KafkaMessage } from 'kafkajs';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { insertRows, type InsertedRows, type InsertedTable } from '../shared/clickhouse/insert-rows.ts';
import { storeIsolating } from '../shared/clickhouse/refused-rows.ts';
import { eventKey, type UsageEventRow } from '../shared/clickhouse/tables/usage-events.ts';
import type { SessionRow } from '../shared/clickhouse/tables/sessions.ts';
import type { BatchingProducer } from '../shared/kafka/batching-producer.ts';
import type { Logger } from '../shared/logger.ts';
import { decodeRecord, type Envelope } from '../shared/records/envelope.ts';
import type { UsageRecord } from '../shared/records/payloads.ts';
import type { LiveUsageEntry, LiveUsageStore } from '../shared/redis/live-usage.ts';
import { announcementOf, type StoredAnnouncements } from '../shared/redis/stored-announcements.ts';
import type { Round, RoundMember } from './batch-runner.ts';
import type { PendingReplays } from './pending-replays.ts';
import type { RateCard } from '../shared/pricing/load-rate-card.ts';
import type { Catalogs } from '../shared/pricing/catalogs.ts';
import { UnpricedWarnings } from './usage/unpriced-warnings.ts';
import { toTableRow, type RecordSource, type SingleRowEnvelope } from './record-rows.ts';
import type { EventClaims } from './usage/event-claims.ts';
import { usageRows, type DecidedUsage, type UsageGroup, type UsageItem } from './usage/usage-rows.ts';

/** Rounds whose decided rows are kept for their retries: more than the group members of a process ever have in flight. */
const MAX_DECIDED_ROUNDS = 64;

export interface SourcedEnvelope {
  readonly envelope: Envelope;
  readonly source: RecordSource;
}

/** One batch's records within a round: its own token (claims), and whether its stored events are left out. */
interface BatchEnvelopes {
  readonly items: readonly SourcedEnvelope[];
  readonly token: string;
  readonly uncertain: boolean;
}

/** A record whose rows ClickHouse refused for what they hold, and why. */
export interface RefusedRecord extends SourcedEnvelope {
  readonly reason: string;
}

interface DeadLetter {
  readonly message: KafkaMessage;
  readonly reason: string;
}

export interface RecordWriterDeps {
  readonly ch: ClickHouse;
  /** Where the stored-id lookup runs: in the embedded engine, a connection that inserts do not hold up. */
  readonly reads: ClickHouse;
  readonly log: Logger;
  /** The rate card, or where to get it as last refreshed (with the tenants' own entries). */
  readonly card: RateCard | (() => RateCard);
  /** The built-in prices beneath the card; absent: the card alone. */
  readonly catalogs?: Catalogs | null;
  /** Usage event claims (Redis); null in the embedded mode. */
  readonly claims: EventClaims | null;
  /** Written after the insert, so what calls in progress show is always stored already. */
  readonly liveUsage: LiveUsageStore;
  /** Told what each stored batch touched (after the live usage), for the live cost streams; absent: nobody listens. */
  readonly announcements?: StoredAnnouncements | null;
  /** Where dead letters are published too (Kafka mode); they always go to the dead_letters table. */
  readonly deadLetterTopic: { readonly producer: BatchingProducer; readonly topic: string } | null;
  /** The batches planned when the views were rebuilt after a crash, not yet committed past (see storeEnvelopes). */
  readonly pendingReplays?: Pick<PendingReplays, 'has' | 'id'>;
}

/**
 * The steps after a batch is read: decode → validate → route (ok / dead letter) → write, one insert
 * per table carrying the batch token, so that a replay of the same batch stores nothing new.
 */
export function createRecordWriter({
  ch,
  reads,
  log,
  card,
  catalogs = null,
  claims,
  liveUsage,
  announcements = null,
  deadLetterTopic,
  pendingReplays,
}: RecordWriterDeps) {
  const unpricedWarnings = new UnpricedWarnings(log);
  /** Stores one batch's records under its token: the embedded journal's rounds (and tests); uncertain: its stored events are left out. */
  function storeEnvelopes(
    items: readonly SourcedEnvelope[],
    batchToken: string,
    { isolate = false, uncertain = false }: { isolate?: boolean; uncertain?: boolean } = {},
  ): Promise<RefusedRecord[]> {
    return storeRound([{ items, token: batchToken, uncertain }], batchToken, { isolate });
  }

  /**
   * Stores the records of a round's batches, one insert per table under the round's token.
   *
   * A batch planned before the views were rebuilt may be in the source tables already, wholly or in
   * part, while a view's deduplication log may or may not know its token (a crash does not keep the
   * two in step, and ClickHouse pushes even a repeated block to the views). So its usage events that
   * are stored are left out whoever claimed them, and the round is inserted under a token of this
   * process, which no table has seen: every table then takes exactly the events the sources lacked.
   * An uncertain batch (regrouped out of the round it was planned in) leaves out its stored events too.
   */
  async function storeRound(
    batches: readonly BatchEnvelopes[],
    roundToken: string,
    { isolate = false } = {},
  ): Promise<RefusedRecord[]> {
    const afterRebuild = batches.some(({ token }) => pendingReplays?.has(token) === true);
    const token = afterRebuild ? `${roundToken}:rebuild-${pendingReplays!.id}` : roundToken;
    const byTable = new Map<InsertedTable, InsertedRows[InsertedTable][]>();
    // Which record each row came from, to dead-letter the records whose rows ClickHouse refuses.
    const origins = new Map<object, SourcedEnvelope>();
    const usage: UsageGroup[] = [];
    let claimed: DecidedUsage['claimed'] = [];
    // By position and event, not by object: a retry's rows were decided from an earlier decoding of the round.
    const usageOrigins = new Map<string, SourcedEnvelope>();
    for (const batch of batches) {
      const items: UsageItem[] = [];
      for (const item of batch.items) {
        const { envelope, source } = item;
        if (envelope.kind === 'usage') {
          const record = envelope.payload as UsageRecord;
          items.push({ record, source });
          const origin = originKey(record, source);
          if (!usageOrigins.has(origin)) usageOrigins.set(origin, item);
          continue;
        }
        const { table, row } = toTableRow(envelope as SingleRowEnvelope, source);
        origins.set(row, item);
        const rows = byTable.get(table);
        if (rows === undefined) byTable.set(table, [row]);
        else rows.push(row);
      }
      if (items.length === 0) continue;
      const storedWins = batch.uncertain || pendingReplays?.has(batch.token) === true;
      usage.push({ items, claimToken: batch.token, storedWins });
    }
    if (usage.length > 0) {
      const decision = await decideUsageRows(token, usage);
      const { rows } = decision;
      claimed = decision.claimed;
      for (const { row, item } of rows) origins.set(row, usageOrigins.get(originKey(item.record, item.source))!);
      byTable.set(
        'usageEvents',
        rows.map(({ row }) => row),
      );
    }
    const refused: RefusedRecord[] = [];
    for (const [table, rows] of byTable) {
      // Without isolation (tests) a refusal fails the whole call.
      if (!isolate) await insertRows(ch, table, rows, token);
      else
        for (const { item, reason } of await storeIsolating(rows, token, (part, partToken) =>
          insertRows(ch, table, part, partToken),
        ))
          refused.push({ ...origins.get(item)!, reason });
    }
    decided.delete(token);
    await releaseClaims(claimed);
    const refusedRows = new Set(refused.map(({ envelope }) => envelope));
    const storedUsage = ((byTable.get('usageEvents') ?? []) as UsageEventRow[]).filter(
      (row) => !refusedRows.has(origins.get(row)!.envelope),
    );
    await recordLiveUsage(liveUsage, storedUsage);
    unpricedWarnings.noteStored(storedUsage);
    const storedSessions = ((byTable.get('sessions') ?? []) as SessionRow[]).filter(
      (row) => !refusedRows.has(origins.get(row)!.envelope),
    );
    await announce([
      ...storedUsage.map((row) => ({ user_id: row.user_id, session: row.session_id })),
      ...storedSessions.map((row) => ({ user_id: row.user_id, session: row.id })),
    ]);
    return refused;
  }

  /** A hint to the live streams: failing to give it delays a live message, never a batch. */
  async function announce(rows: readonly { readonly user_id: string; readonly session: string }[]): Promise<void> {
    if (announcements === null || rows.length === 0) return;
    await announcements.publish(announcementOf(rows)).catch((error: unknown) => {
      log.warn({ err: error }, 'stored_batch_not_announced');
    });
  }

  /**
   * The round is in every table: its claims are let go, and a later copy of its events is answered by
   * the stored-id lookup. A release Redis refuses is left to the claims' TTL; it never fails the round.
   */
  async function releaseClaims(claimed: DecidedUsage['claimed']): Promise<void> {
    // On a cluster the stored-id lookup may read a replica that has not fetched the round's part yet:
    // the claims then stay for their TTL, which catches a client's copy whatever the replicas' lag.
    if (claims === null || ch.cluster !== null) return;
    await Promise.all(claimed.map(({ token, keys }) => claims.release(keys, token))).catch((error: unknown) => {
      log.warn({ err: error }, 'usage_claims_not_released');
    });
  }

  // Decided once per round: a retry sends the same rows, priced the same, under the same token. An
  // insert into usage_events is not atomic across its views: a view that failed (a full disk, a
  // refused part) leaves the source and the other views stored. The retry's block is then dropped by
  // the source and by every view that has it, and taken by the view that lacks it (the views check
  // their own deduplication, deduplicate_blocks_in_dependent_materialized_views); decided again, the
  // stored-id lookup would leave those events out and that view would never get them. Forgotten once
  // the round is stored; a round given up (a rebalance) is dropped with the oldest.
  const decided = new Map<string, Promise<DecidedUsage>>();
  function decideUsageRows(token: string, groups: readonly UsageGroup[]) {
    let rows = decided.get(token);
    // Kept as the most recently tried: the rounds dropped first are the ones no longer retried.
    if (rows !== undefined) {
      decided.delete(token);
      decided.set(token, rows);
    } else {
      const deps = { ch: reads, card: typeof card === 'function' ? card() : card, catalogs, claims };
      rows = usageRows(deps, groups);
      decided.set(token, rows);
      if (decided.size > MAX_DECIDED_ROUNDS) decided.delete(decided.keys().next().value!);
      // A failed decision (Redis or ClickHouse down) is made again on the next try.
      rows.catch(() => decided.delete(token));
    }
    return rows;
  }

  async function storeDeadLetters(member: RoundMember, dead: readonly DeadLetter[]): Promise<void> {
    if (dead.length === 0) return;
    log.warn(
      { topic: member.topic, partition: member.partition, count: dead.length, reason: dead[0]!.reason },
      'records_dead_lettered',
    );
    const rows = dead.map(({ message, reason }) => ({
      kind: message.headers?.kind?.toString() ?? 'unknown',
      reason,
      topic: member.topic,
      kafka_partition: member.partition,
      kafka_offset: message.offset,
      record: message.value?.toString('utf8') ?? '',
    }));
    // Under the batch's own token: a regrouped replay stores a batch's dead letters once too.
    await insertRows(ch, 'deadLetters', rows, member.token);
    if (deadLetterTopic === null) return;
    const records = dead.map(({ message, reason }) => ({
      key: message.key?.toString() ?? '',
      value: message.value ?? Buffer.alloc(0),
      headers: { reason, topic: member.topic, partition: String(member.partition), offset: message.offset },
    }));
    await deadLetterTopic.producer.publish(deadLetterTopic.topic, records);
  }

  async function handleRound(round: Round): Promise<void> {
    const batches: BatchEnvelopes[] = [];
    const dead = new Map<RoundMember, DeadLetter[]>();
    const messageAt = new Map<string, { member: RoundMember; message: KafkaMessage }>();
    for (const member of round.members) {
      const items: SourcedEnvelope[] = [];
      const undecodable: DeadLetter[] = [];
      for (const message of member.messages) {
        const decoded = decodeRecord(message.value);
        messageAt.set(`${member.partition}:${message.offset}`, { member, message });
        if (decoded.ok)
          items.push({ envelope: decoded.envelope, source: { partition: member.partition, offset: message.offset } });
        else undecodable.push({ message, reason: decoded.reason });
      }
      batches.push({ items, token: member.token, uncertain: member.uncertain });
      dead.set(member, undecodable);
    }
    // Records ClickHouse refuses for what they hold go to the dead letters beside the undecodable ones,
    // and the rest is stored: retried, they would hold up every record behind them for ever.
    const refused = await storeRound(batches, round.token, { isolate: true });
    for (const { source, reason } of refused) {
      const { member, message } = messageAt.get(`${source.partition}:${source.offset}`)!;
      dead.get(member)!.push({ message, reason });
    }
    for (const [member, letters] of dead) await storeDeadLetters(member, letters);
  }

  return { storeEnvelopes, handleRound };
}

export type RecordWriter = ReturnType<typeof createRecordWriter>;

/** Where a usage event sits in a round: its position, and its event (an embedded round's positions are all -1). */
function originKey(record: UsageRecord, source: RecordSource): string {
  return `${source.partition}:${source.offset}:${eventKey(record.user_id, record.event_id)}`;
}

async function recordLiveUsage(liveUsage: LiveUsageStore, rows: readonly UsageEventRow[]): Promise<void> {
  const bySession = new Map<string, LiveUsageEntry[]>();
  for (const row of rows) {
    const entry = {
      event_id: row.id,
      provider: row.provider,
      service: row.service,
      event_type: row.event_type,
      unit: row.unit,
      quantity: row.quantity,
      cost: row.cost,
    };
    const entries = bySession.get(row.session_id);
    if (entries === undefined) bySession.set(row.session_id, [entry]);
    else entries.push(entry);
  }
  await Promise.all([...bySession].map(([sessionId, entries]) => liveUsage.record(sessionId, entries)));
}
