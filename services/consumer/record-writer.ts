import type { ClickHouse } from '../shared/clickhouse/client.ts';
import type { InsertedTable } from '../shared/clickhouse/insert-rows.ts';
import type { Refused } from '../shared/clickhouse/refused-rows.ts';
import type { SessionRow } from '../shared/clickhouse/tables/sessions.ts';
import type { UsageEventRow } from '../shared/clickhouse/tables/usage-events.ts';
import type { Logger } from '../shared/logger.ts';
import type { Catalogs } from '../domain/pricing/index.ts';
import type { RateCard } from '../domain/pricing/index.ts';
import type { Envelope } from '../domain/records/index.ts';
import type { LiveUsageStore } from '../shared/redis/live-usage.ts';
import type { StoredAnnouncements } from '../shared/redis/stored-announcements.ts';
import type { PendingReplays } from './pending-replays.ts';
import type { DecodedBatch, Round, RoundItem, SourcedEnvelope } from './round.ts';
import { announceStored } from './steps/announce-stored.ts';
import { DecidedRounds } from './steps/decided-rounds.ts';
import { decodeRound } from './steps/decode-round.ts';
import { insertTables } from './steps/insert-tables.ts';
import { recordLiveUsage } from './steps/record-live-usage.ts';
import { releaseClaims } from './steps/release-claims.ts';
import { routeRecords, type TableEntry, type UsageOrigin } from './steps/route-records.ts';
import { storeDeadLetters, type DeadLetterDeps } from './steps/store-dead-letters.ts';
import type { EventClaims } from './usage/event-claims.ts';
import type { UnpricedNotices } from './usage/unpriced-notices.ts';
import { UnpricedWarnings } from './usage/unpriced-warnings.ts';
import { usageRows, type DecidedUsage, type UsageGroup } from './usage/usage-rows.ts';
import { CountedSessions } from './usage/session-firsts.ts';

export type { SourcedEnvelope };

/** Rounds whose decided rows are kept for their retries: more than the group members of a process ever have in flight. */
const MAX_DECIDED_ROUNDS = 64;
/** Sessions the writer remembers as counted (usage/session-firsts.ts): more than the calls live at once. */
const COUNTED_SESSIONS = 20_000;

/** A record whose rows ClickHouse refused for what they hold, and why. */
export interface RefusedRecord extends SourcedEnvelope {
  readonly reason: string;
}

/** What a stored round held: every record that decoded (stored, or refused and dead-lettered). */
export interface StoredRound {
  readonly envelopes: readonly Envelope[];
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
  readonly deadLetterTopic: DeadLetterDeps['topic'];
  /** The batches planned when the views were rebuilt after a crash, not yet committed past (see writeRound). */
  readonly pendingReplays?: Pick<PendingReplays, 'has' | 'id'>;
  /** Told each round's stored usage, for the usage.unpriced webhook (its emits run beside the rounds); absent: none. */
  readonly unpriced?: Pick<UnpricedNotices, 'noteStored'> | null;
}

type Decided = DecidedUsage<UsageOrigin<RoundItem>>;

/**
 * What the storing loop's store step runs for a round of any source, in named steps (steps/): decode →
 * route → decide the usage rows (claim, look up, price) → insert, one insert per table carrying the
 * round's token, so that a replay of the same round stores nothing new → release the claims → live
 * usage → announce → the first unpriced usage of its kind as a webhook (not waited for) → dead letters.
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
  unpriced = null,
}: RecordWriterDeps) {
  const unpricedWarnings = new UnpricedWarnings(log);
  const decided = new DecidedRounds<Decided>(MAX_DECIDED_ROUNDS);
  const counted = new CountedSessions(COUNTED_SESSIONS);
  const replayedAfterRebuild = (token: string) => pendingReplays?.has(token) === true;

  /**
   * Steps 2 to 7, and the unpriced notices handed over: the records of a round's
   * batches, one insert per table under the round's token.
   *
   * A batch planned before the views were rebuilt may be in the source tables already, wholly or in
   * part, while a view's deduplication log may or may not know its token (a crash does not keep the
   * two in step, and ClickHouse pushes even a repeated block to the views). So its usage events that
   * are stored are left out whoever claimed them, and the round is inserted under a token of this
   * process, which no table has seen: every table then takes exactly the events the sources lacked.
   * An uncertain batch (regrouped out of the round it was planned in) leaves out its stored events too.
   */
  async function writeRound(
    batches: readonly DecodedBatch[],
    roundToken: string,
    { isolate }: { readonly isolate: boolean },
  ): Promise<Refused<RoundItem>[]> {
    const afterRebuild = batches.some(({ token }) => replayedAfterRebuild(token));
    const token = afterRebuild ? `${roundToken}:rebuild-${pendingReplays!.id}` : roundToken;
    const { tables, usage } = routeRecords(batches, (batch) => batch.uncertain || replayedAfterRebuild(batch.token));
    const claimed = usage.length === 0 ? [] : await decideUsage(token, usage, tables);
    const refused = await insertTables(ch, tables, token, { isolate });
    decided.forget(token);
    await releaseClaims(claims, claimed, { onCluster: ch.cluster !== null, log });
    const stored = storedRows(tables, refused);
    await recordLiveUsage(liveUsage, stored.usage);
    unpricedWarnings.noteStored(stored.usage);
    await announceStored(announcements, stored, log);
    // Not awaited: the webhook's emits never hold up the round (unpriced-notices.ts bounds them).
    void unpriced?.noteStored(stored.usage);
    return refused.map(({ item, reason }) => ({ item: item.origin, reason }));
  }

  /** Step 3, decide: the round's usage rows (usage/usage-rows.ts), decided once per round token; returns the claims taken. */
  async function decideUsage(
    token: string,
    usage: readonly UsageGroup<UsageOrigin<RoundItem>>[],
    tables: Map<InsertedTable, TableEntry<RoundItem>[]>,
  ): Promise<Decided['claimed']> {
    const decision = await decided.decide(token, () =>
      usageRows({ ch: reads, card: typeof card === 'function' ? card() : card, catalogs, claims, counted }, usage),
    );
    // A retry's rows come from an earlier decoding of the round: their origins name the same places in it.
    tables.set(
      'usageEvents',
      decision.rows.map(({ row, item }) => ({ row, origin: item.origin })),
    );
    return decision.claimed;
  }

  /** A round from its source: decoded (step 1), written (steps 2 to 7), its dead letters stored (step 8). */
  async function handleRound(round: Round): Promise<StoredRound> {
    const { batches, undecodable, places } = decodeRound(round);
    const refused = await writeRound(batches, round.token, { isolate: true });
    await storeDeadLetters({ ch, log, topic: deadLetterTopic }, [
      ...undecodable,
      ...refused.map(({ item, reason }) => ({ ...places.get(item.at)!, reason, kind: item.envelope.kind })),
    ]);
    return { envelopes: batches.flatMap(({ items }) => items.map(({ envelope }) => envelope)) };
  }

  /** Stores decoded records as one batch under its token (tests); uncertain: its stored events are left out. */
  async function storeEnvelopes(
    items: readonly SourcedEnvelope[],
    batchToken: string,
    { isolate = false, uncertain = false }: { isolate?: boolean; uncertain?: boolean } = {},
  ): Promise<RefusedRecord[]> {
    const placed = items.map((item, i) => ({ ...item, at: String(i) }));
    const refused = await writeRound([{ items: placed, token: batchToken, uncertain }], batchToken, { isolate });
    return refused.map(({ item: { envelope, source }, reason }) => ({ envelope, source, reason }));
  }

  return { storeEnvelopes, handleRound };
}

export type RecordWriter = ReturnType<typeof createRecordWriter>;

/** The usage and session rows the insert stored: every row but those ClickHouse refused. */
function storedRows(
  tables: ReadonlyMap<InsertedTable, readonly TableEntry<RoundItem>[]>,
  refused: readonly Refused<TableEntry<RoundItem>>[],
): { usage: UsageEventRow[]; sessions: SessionRow[] } {
  const refusedEntries = new Set(refused.map(({ item }) => item));
  const kept = (table: InsertedTable) =>
    (tables.get(table) ?? []).filter((entry) => !refusedEntries.has(entry)).map(({ row }) => row);
  return { usage: kept('usageEvents') as UsageEventRow[], sessions: kept('sessions') as SessionRow[] };
}
