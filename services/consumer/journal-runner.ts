import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { insertRows } from '../shared/clickhouse/insert-rows.ts';
import { lookupParts } from '../shared/clickhouse/tables/usage-events.ts';
import { tableName } from '../shared/clickhouse/tables.ts';
import type { Logger } from '../shared/logger.ts';
import type { UsageRecord } from '../shared/records/payloads.ts';
import { decodeRecord, type Envelope } from '../shared/records/envelope.ts';
import type { PlannedRound, RecordJournal } from '../shared/records/journal.ts';
import { exponentialDelay, retry } from '../shared/retry.ts';
import type { RecordWriter, SourcedEnvelope } from './record-writer.ts';

export interface JournalRunnerDeps {
  readonly journal: RecordJournal;
  readonly writer: Pick<RecordWriter, 'storeEnvelopes'>;
  /** Where the dead letters go (the dead_letters table). */
  readonly ch: ClickHouse;
  readonly log: Logger;
  /** The embedded engine was rebuilt after a crash: the round it was storing may be in the sources in part. */
  readonly afterRebuild: boolean;
  /** Told what each stored round held, after it is stored. */
  readonly onStored?: (envelopes: readonly Envelope[]) => Promise<void>;
  /** Records in one round at most (one insert per table). */
  readonly maxRoundRecords?: number;
}

export interface JournalRunner {
  /** Stores what is left, within the shutdown's time, and stops. */
  readonly stop: () => Promise<void>;
  /** Why /readyz should fail: the round in flight has failed to store for longer than `afterMs`. */
  readonly stalled: (afterMs: number) => string | null;
}

// The embedded mode's rows carry no Kafka position, as before the journal (the columns' -1).
const SOURCE = { partition: -1, offset: '-1' } as const;

/**
 * The embedded mode's consumer: stores the journal's records in rounds, one insert per table per round,
 * as the batch runner stores a Kafka fetch. Each round's range and token are written before it is
 * stored, so a restart replays the same records under the same token (ClickHouse drops the repeat) and
 * an event already stored is never counted again; a round stays in the journal until it is stored.
 */
export function startJournalRunner({
  journal,
  writer,
  ch,
  log,
  afterRebuild,
  onStored = async () => undefined,
  maxRoundRecords = 10_000,
}: JournalRunnerDeps): JournalRunner {
  const runnerLog = log.child({ component: 'journal' });
  let stopping = false;
  let failingSince: number | null = null;
  let wake: (() => void) | null = null;
  const unsubscribe = journal.onAppend(() => wake?.());

  const roundToken = ({ from, to }: { from: number; to: number }) => `journal:${journal.id}:${from}-${to}`;

  async function nextRound(): Promise<PlannedRound | null> {
    const planned = journal.planned();
    if (planned !== null) {
      runnerLog.warn({ from: planned.from, to: planned.to, afterRebuild }, 'journal_round_replayed');
      if (!afterRebuild) return planned;
      // Stored in part before the crash, while a view's deduplication log may know its token without its
      // rows (the views were rebuilt from the sources): its stored events win, and a token no table has
      // seen, new at every rebuild, makes every table take what the sources lack.
      const replay = { ...planned, token: `${roundToken(planned)}:rebuild-${randomUUID()}`, uncertain: true };
      await journal.plan(replay);
      return replay;
    }
    const from = journal.stored();
    const to = Math.min(journal.appended(), from + maxRoundRecords);
    if (to === from) return null;
    const round = { from, to, token: roundToken({ from, to }) };
    await journal.plan(round);
    return round;
  }

  async function store(round: PlannedRound): Promise<void> {
    const entries = await journal.read(round.from, round.to);
    const items: SourcedEnvelope[] = [];
    const dead: { seq: number; kind: string; value: string; reason: string }[] = [];
    for (const { seq, value } of entries) {
      const decoded = decodeRecord(Buffer.from(value, 'utf8'));
      if (decoded.ok) items.push({ envelope: decoded.envelope, source: SOURCE });
      else dead.push({ seq, kind: 'unknown', value, reason: decoded.reason });
    }
    const seqOf = new Map(items.map((item, i) => [item.envelope, entries[i]!.seq]));
    const refused = await writer.storeEnvelopes(items, round.token, {
      isolate: true,
      uncertain: round.uncertain === true,
    });
    for (const { envelope, reason } of refused)
      dead.push({ seq: seqOf.get(envelope) ?? -1, kind: envelope.kind, value: JSON.stringify(envelope), reason });
    if (dead.length > 0) {
      runnerLog.warn({ count: dead.length, reason: dead[0]!.reason }, 'records_dead_lettered');
      const rows = dead.map(({ seq, kind, value, reason }) => ({
        kind,
        reason,
        topic: 'journal',
        kafka_partition: -1,
        kafka_offset: String(seq),
        record: value,
      }));
      await insertRows(ch, 'deadLetters', rows, `${round.token}:dead`);
    }
    await onStored(items.map(({ envelope }) => envelope));
  }

  // An outage (ClickHouse refusing inserts for a while, a full disk) pauses the rounds; the journal
  // keeps the records. A round is retried as it was planned, under its token: a view that failed while
  // the source and the other views stored it then takes it (record-writer.ts, decideUsageRows).
  const untilDone = <T>(step: () => Promise<T>, event: string, round?: { from: number; to: number }) =>
    retry(
      async () => {
        try {
          const result = await step();
          failingSince = null;
          return { result };
        } catch (error) {
          failingSince ??= Date.now();
          runnerLog.warn({ err: error, from: round?.from, to: round?.to }, event);
          return null;
        }
      },
      { delayMs: exponentialDelay(100, 5_000), wait: pauseUnless(() => stopping) },
    );

  async function run(): Promise<void> {
    while (!stopping) {
      // Planning and marking write the journal: a full disk refuses them too, and they are retried alike.
      const next = await untilDone(nextRound, 'journal_round_not_planned');
      if (next === null) return;
      const round = next.result;
      if (round === null) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          // An append (or a stop) between the check above and here would otherwise wait for the next one.
          if (stopping || journal.appended() > journal.stored()) resolve();
        });
        wake = null;
        continue;
      }
      if ((await untilDone(() => store(round), 'journal_round_not_stored', round)) === null) return;
      if ((await untilDone(() => journal.markStored(round.to), 'journal_round_not_marked', round)) === null) return;
    }
  }

  const running = run().catch((error: unknown) => runnerLog.error({ err: error }, 'journal_runner_failed'));
  return {
    stop: async () => {
      // What was acknowledged is stored before the engine closes, as far as the shutdown's time allows;
      // anything left is replayed by the next start.
      while (!stopping && journal.stored() < journal.appended() && failingSince === null) await sleep(10);
      stopping = true;
      wake?.();
      unsubscribe();
      await running;
    },
    stalled: (afterMs) =>
      failingSince !== null && Date.now() - failingSince > afterMs
        ? `the journal's round has not been stored for ${Math.round((Date.now() - failingSince) / 1000)} s`
        : null,
  };
}

/** A retry's pause that gives up once `stopped` says so. */
function pauseUnless(stopped: () => boolean): (ms: number) => Promise<boolean> {
  return async (ms) => {
    if (stopped()) return false;
    await sleep(ms);
    return !stopped();
  };
}

/**
 * Whether the round the journal found planned at start may have reached the source tables: some of its
 * usage events are in usage_events. A round that failed in a view (an insert is not atomic across the
 * views) left its events in usage_events without that view; replayed by a new process, whose stored-id
 * lookup leaves those events out, the view would never get them. Such a start rebuilds the views first
 * and replays the round as after a crash. Asked of usage_events itself: the stored-id lookup reads a
 * view, which may be the one that failed. (An event of the round stored by an earlier round, a client's
 * resend, makes a start rebuild needlessly: a full scan, and only with a round left planned.)
 */
export async function plannedRoundReachedSources(
  journal: Pick<RecordJournal, 'planned' | 'read'>,
  reads: ClickHouse,
): Promise<boolean> {
  const planned = journal.planned();
  if (planned === null) return false;
  const usage: UsageRecord[] = [];
  for (const { value } of await journal.read(planned.from, planned.to)) {
    const decoded = decodeRecord(Buffer.from(value, 'utf8'));
    if (decoded.ok && decoded.envelope.kind === 'usage') usage.push(decoded.envelope.payload as UsageRecord);
  }
  for (const part of lookupParts(usage)) {
    const times = part.map((record) => Date.parse((record as UsageRecord).occurred_at));
    // The sort key's leading columns bound the scan; a day either side of the round's times is ample.
    const result = await reads.client.query({
      query: `SELECT count() AS n FROM ${tableName(reads, 'usageEvents')}
        WHERE has({users:Array(String)}, user_id)
          AND occurred_at BETWEEN fromUnixTimestamp64Milli({from:Int64}) AND fromUnixTimestamp64Milli({to:Int64})
          AND (user_id, id) IN (SELECT arrayJoin(arrayZip({users:Array(String)}, {ids:Array(UUID)})))`,
      query_params: {
        users: part.map((ref) => ref.user_id),
        ids: part.map((ref) => ref.event_id),
        from: Math.min(...times) - 86_400_000,
        to: Math.max(...times) + 86_400_000,
      },
      format: 'JSONEachRow',
    });
    const [counted] = await result.json<{ n: string }>();
    if (Number(counted?.n ?? 0) > 0) return true;
  }
  return false;
}
