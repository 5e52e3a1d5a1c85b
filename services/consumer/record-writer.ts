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
import type { RecordBatch } from './batch-runner.ts';
import type { PendingReplays } from './pending-replays.ts';
import type { RateCard } from '../shared/pricing/load-rate-card.ts';
import type { Catalogs } from '../shared/pricing/catalogs.ts';
import { UnpricedWarnings } from './usage/unpriced-warnings.ts';
import { toTableRow, type RecordSource, type SingleRowEnvelope } from './record-rows.ts';
import type { EventClaims } from './usage/event-claims.ts';
import { usageRows, type UsageItem } from './usage/usage-rows.ts';

export interface SourcedEnvelope {
  readonly envelope: Envelope;
  readonly source: RecordSource;
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
  /**
   * A batch planned before the views were rebuilt may be in the source tables already, wholly or in
   * part, while a view's deduplication log may or may not know its token (a crash does not keep the
   * two in step, and ClickHouse pushes even a repeated block to the views). So its usage events that
   * are stored are left out whoever claimed them, and what is left is inserted under a token of this
   * process, which no table has seen: every table then takes exactly the events the sources lacked.
   */
  async function storeEnvelopes(
    items: readonly SourcedEnvelope[],
    batchToken: string,
    { isolate = false } = {},
  ): Promise<RefusedRecord[]> {
    const afterRebuild = pendingReplays?.has(batchToken) === true;
    const token = afterRebuild ? `${batchToken}:rebuild-${pendingReplays!.id}` : batchToken;
    const byTable = new Map<InsertedTable, InsertedRows[InsertedTable][]>();
    // Which record each row came from, to dead-letter the records whose rows ClickHouse refuses.
    const origins = new Map<object, SourcedEnvelope>();
    const usage: UsageItem[] = [];
    const usageOrigins = new Map<string, SourcedEnvelope>();
    for (const item of items) {
      const { envelope, source } = item;
      if (envelope.kind === 'usage') {
        const record = envelope.payload as UsageRecord;
        usage.push({ record, source });
        const key = eventKey(record.user_id, record.event_id);
        if (!usageOrigins.has(key)) usageOrigins.set(key, item);
        continue;
      }
      const { table, row } = toTableRow(envelope as SingleRowEnvelope, source);
      origins.set(row, item);
      const rows = byTable.get(table);
      if (rows === undefined) byTable.set(table, [row]);
      else rows.push(row);
    }
    if (usage.length > 0) {
      const rows = afterRebuild
        ? await rowsAfterRebuild(batchToken, usage)
        : await usageRows(
            { ch: reads, card: typeof card === 'function' ? card() : card, catalogs, claims },
            usage,
            batchToken,
          );
      for (const row of rows) origins.set(row, usageOrigins.get(eventKey(row.user_id, row.id))!);
      byTable.set('usageEvents', rows);
    }
    const refused: RefusedRecord[] = [];
    for (const [table, rows] of byTable) {
      // Without isolation (the embedded path) a refusal fails the whole call, which isolates by request.
      if (!isolate) await insertRows(ch, table, rows, token);
      else
        for (const { item, reason } of await storeIsolating(rows, token, (part, partToken) =>
          insertRows(ch, table, part, partToken),
        ))
          refused.push({ ...origins.get(item)!, reason });
    }
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

  // Decided once per replayed batch: a retry of its insert (the same rows under the same token) is
  // then deduplicated table by table, even when the first try stored some of them.
  const decidedAfterRebuild = new Map<string, Promise<UsageEventRow[]>>();
  function rowsAfterRebuild(batchToken: string, usage: readonly UsageItem[]): Promise<UsageEventRow[]> {
    let rows = decidedAfterRebuild.get(batchToken);
    if (rows === undefined) {
      rows = usageRows(
        { ch: reads, card: typeof card === 'function' ? card() : card, catalogs, claims },
        usage,
        batchToken,
        { storedWins: true },
      );
      decidedAfterRebuild.set(batchToken, rows);
      // A failed decision (Redis or ClickHouse down) is made again on the next try.
      rows.catch(() => decidedAfterRebuild.delete(batchToken));
    }
    return rows;
  }

  async function storeDeadLetters(batch: RecordBatch, dead: readonly DeadLetter[]): Promise<void> {
    if (dead.length === 0) return;
    log.warn(
      { topic: batch.topic, partition: batch.partition, count: dead.length, reason: dead[0]!.reason },
      'records_dead_lettered',
    );
    const rows = dead.map(({ message, reason }) => ({
      kind: message.headers?.kind?.toString() ?? 'unknown',
      reason,
      topic: batch.topic,
      kafka_partition: batch.partition,
      kafka_offset: message.offset,
      record: message.value?.toString('utf8') ?? '',
    }));
    await insertRows(ch, 'deadLetters', rows, batch.token);
    if (deadLetterTopic === null) return;
    const records = dead.map(({ message, reason }) => ({
      key: message.key?.toString() ?? '',
      value: message.value ?? Buffer.alloc(0),
      headers: { reason, topic: batch.topic, partition: String(batch.partition), offset: message.offset },
    }));
    await deadLetterTopic.producer.publish(deadLetterTopic.topic, records);
  }

  async function handleBatch(batch: RecordBatch): Promise<void> {
    const good: SourcedEnvelope[] = [];
    const dead: DeadLetter[] = [];
    const messageAt = new Map<string, KafkaMessage>();
    for (const message of batch.messages) {
      const decoded = decodeRecord(message.value);
      messageAt.set(message.offset, message);
      if (decoded.ok)
        good.push({ envelope: decoded.envelope, source: { partition: batch.partition, offset: message.offset } });
      else dead.push({ message, reason: decoded.reason });
    }
    // Records ClickHouse refuses for what they hold go to the dead letters beside the undecodable ones,
    // and the rest is stored: retried, they would hold up every record behind them for ever.
    const refused = await storeEnvelopes(good, batch.token, { isolate: true });
    for (const { source, reason } of refused) dead.push({ message: messageAt.get(source.offset)!, reason });
    await storeDeadLetters(batch, dead);
  }

  return { storeEnvelopes, handleBatch };
}

export type RecordWriter = ReturnType<typeof createRecordWriter>;

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
