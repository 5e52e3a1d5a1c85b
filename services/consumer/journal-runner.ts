import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import type { ClickHouse } from '../shared/clickhouse/client.ts';
import { insertRows } from '../shared/clickhouse/insert-rows.ts';
import type { Logger } from '../shared/logger.ts';
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

  // An outage (ClickHouse refusing inserts for a while) pauses the rounds; the journal keeps the records.
  const storeUntilStored = (round: PlannedRound) =>
    retry(
      async () => {
        try {
          await store(round);
          failingSince = null;
          return true;
        } catch (error) {
          failingSince ??= Date.now();
          runnerLog.warn({ err: error, from: round.from, to: round.to }, 'journal_round_not_stored');
          return null;
        }
      },
      { delayMs: exponentialDelay(100, 5_000), wait: pauseUnless(() => stopping) },
    );

  async function run(): Promise<void> {
    while (!stopping) {
      const round = await nextRound();
      if (round === null) {
        await new Promise<void>((resolve) => {
          wake = resolve;
          // An append between the check above and here would otherwise wait for the next one.
          if (journal.appended() > journal.stored()) resolve();
        });
        wake = null;
        continue;
      }
      if ((await storeUntilStored(round)) === null) return;
      await journal.markStored(round.to);
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
