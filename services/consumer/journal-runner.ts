import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { lookupParts } from '../shared/clickhouse/tables/usage-events.ts';
import { tableName } from '../shared/clickhouse/tables.ts';
import type { Logger } from '../shared/logger.ts';
import type { UsageRecord } from '../domain/records/index.ts';
import { decodeRecord, type Envelope } from '../domain/records/index.ts';
import type { PlannedRound, RecordJournal } from '../domain/records/index.ts';
import type { RecordWriter } from './record-writer.ts';
import type { Round } from './round.ts';
import { runRound, type RoundSource } from './storing-loop.ts';

export interface JournalRunnerDeps {
  readonly journal: RecordJournal;
  readonly writer: Pick<RecordWriter, 'handleRound'>;
  readonly log: Logger;
  /** The embedded engine was rebuilt after a crash: the round it was storing may be in the sources in part. */
  readonly afterRebuild: boolean;
  /** Told what each stored round held, after it is stored. */
  readonly onStored?: (envelopes: readonly Envelope[]) => Promise<void>;
  /** Records in one round at most (one insert per table). */
  readonly maxRoundRecords?: number;
  /** How rounds gather records while the writer is busy (JOURNAL_GATHER_MS, JOURNAL_GATHER_RECORDS); absent: never. */
  readonly gather?: RoundGathering;
}

/**
 * A round costs the engine about the same whatever it holds up to a few hundred records (a part per
 * table: usage_events and each rollup), so a writer that stores every record as it comes spends most of
 * a core on a tenant posting one event at a time. While busy, the next round therefore starts no sooner
 * than `ms` after the previous one started, unless `records` records wait or a read waits for one of
 * them. An idle writer (its previous round started `ms` ago or more) stores at once.
 */
export interface RoundGathering {
  readonly ms: number;
  readonly records: number;
}

export interface JournalRunner {
  /** Stores what is left, within the shutdown's time, and stops. */
  readonly stop: () => Promise<void>;
  /** Why /readyz should fail: the round in flight has failed to store for longer than `afterMs`. */
  readonly stalled: (afterMs: number) => string | null;
}

/** A range of the journal as the storing loop runs it. */
interface JournalRound extends PlannedRound {
  /** Planned already (replayed as it was after a restart): nothing to write before storing it. */
  readonly replayed: boolean;
}

/** Records of a tenant whose read waited for its records within this long are stored without gathering. */
const READ_AFTER_WRITE_MS = 1_000;

// The embedded mode's rows carry no Kafka position, as before the journal (the columns' -1).
const ROW_SOURCE = { partition: -1, offset: '-1' } as const;

/**
 * The embedded mode's consumer: the journal's records in rounds, one insert per table per round, through
 * the storing loop (storing-loop.ts) as a Kafka fetch goes. Each round's range and token are written
 * before it is stored (its plan), so a restart replays the same records under the same token (ClickHouse
 * drops the repeat) and an event already stored is never counted again; a round stays in the journal
 * until it is stored (its commit marks it stored, and its records go). An outage (ClickHouse refusing
 * inserts for a while, a full disk) pauses the rounds and the journal keeps the records: planning and
 * marking write the journal, so a full disk refuses them too, and they are retried alike. A round is
 * retried as it was planned, under its token: a view that failed while the source and the other views
 * stored it then takes it (steps/decided-rounds.ts).
 */
export function startJournalRunner({
  journal,
  writer,
  log,
  afterRebuild,
  onStored = async () => undefined,
  maxRoundRecords = 10_000,
  gather = { ms: 0, records: 0 },
}: JournalRunnerDeps): JournalRunner {
  const runnerLog = log.child({ component: 'journal' });
  let stopping = false;
  let failingSince: number | null = null;
  let wake: (() => void) | null = null;
  /** When the round before started (performance.now()). */
  let lastStartedAt = Number.NEGATIVE_INFINITY;
  const unsubscribe = journal.onAppend(() => wake?.());
  const unsubscribeWaits = journal.onWait(() => wake?.());

  /** How long the next round should gather yet before it starts (0: start now). */
  function gatherFor(round: JournalRound): number {
    if (stopping || round.replayed || round.uncertain === true || journal.awaited()) return 0;
    if (round.to - round.from >= gather.records) return 0;
    // A tenant whose records wait reads what it writes right after writing it: the round goes at once
    // (and takes the other tenants' records waiting beside them).
    if (journal.awaitedWithin(READ_AFTER_WRITE_MS)) return 0;
    return Math.max(0, lastStartedAt + gather.ms - performance.now());
  }

  const roundToken = ({ from, to }: { from: number; to: number }) => `journal:${journal.id}:${from}-${to}`;

  /** The round planned before this start, replayed; else the next range appended; null when none waits. */
  function nextRound(): JournalRound | null {
    const planned = journal.planned();
    if (planned !== null) {
      runnerLog.warn({ from: planned.from, to: planned.to, afterRebuild }, 'journal_round_replayed');
      if (!afterRebuild) return { ...planned, replayed: true };
      // Stored in part before the crash, while a view's deduplication log may know its token without its
      // rows (the views were rebuilt from the sources): its stored events win, and a token no table has
      // seen, new at every rebuild, makes every table take what the sources lack.
      return { ...planned, token: `${roundToken(planned)}:rebuild-${randomUUID()}`, uncertain: true, replayed: false };
    }
    const from = journal.stored();
    const to = Math.min(journal.appended(), from + maxRoundRecords);
    if (to === from) return null;
    return { from, to, token: roundToken({ from, to }), replayed: false };
  }

  const source: RoundSource<JournalRound> = {
    retriesWrites: true,
    async plan({ replayed, from, to, token, uncertain }) {
      if (!replayed) await journal.plan(uncertain === true ? { from, to, token, uncertain } : { from, to, token });
    },
    async store(round) {
      const { envelopes } = await writer.handleRound(await roundOf(round));
      await onStored(envelopes);
    },
    commit: ({ to }) => journal.markStored(to),
    holds: () => !stopping,
    failed: () => {
      failingSince ??= Date.now();
    },
    ended: (_step, _round, done) => {
      if (done) failingSince = null;
    },
  };

  /** The round's records as one batch of the "journal" topic: dead letters name their journal positions. */
  async function roundOf({ from, to, token, uncertain }: JournalRound): Promise<Round> {
    const entries = await journal.read(from, to);
    const messages = entries.map(({ seq, value }) => ({ offset: String(seq), value: Buffer.from(value, 'utf8') }));
    const member = {
      topic: 'journal',
      partition: -1,
      messages,
      token,
      uncertain: uncertain === true,
      rowSource: ROW_SOURCE,
      deadLetterToken: `${token}:dead`,
    };
    return { members: [member], token };
  }

  async function run(): Promise<void> {
    while (!stopping) {
      const round = nextRound();
      const waitMs = round === null ? Number.POSITIVE_INFINITY : gatherFor(round);
      if (round === null || waitMs > 0) {
        // Until an append, a read waiting or a stop wakes it (or the gathering's time is up): the round is planned again then.
        let timer: NodeJS.Timeout | undefined;
        await new Promise<void>((resolve) => {
          wake = resolve;
          if (round !== null) timer = setTimeout(resolve, waitMs);
          // An append (or a stop) between the check above and here would otherwise wait for the next one.
          else if (stopping || journal.appended() > journal.stored()) resolve();
        });
        clearTimeout(timer);
        wake = null;
        continue;
      }
      lastStartedAt = performance.now();
      if (!(await runRound(round, source, runnerLog))) return;
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
      unsubscribeWaits();
      await running;
    },
    stalled: (afterMs) =>
      failingSince !== null && Date.now() - failingSince > afterMs
        ? `the journal's round has not been stored for ${Math.round((Date.now() - failingSince) / 1000)} s`
        : null,
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
