import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import type { UsageRecord } from '../../domain/records/index.ts';
import { priceUsage } from '../../domain/pricing/index.ts';
import type { RateCard } from '../../domain/pricing/index.ts';
import type { Catalogs } from '../../domain/pricing/index.ts';
import {
  eventKey,
  storedEventKeys,
  storedEventPlaces,
  storedReversals,
  storedSessionMarks,
  sessionKey,
  correctionRow,
  usageEventRow,
  type RecordSource,
  type SessionMark,
  type UsageEventRow,
} from '../../shared/clickhouse/tables/usage-events.ts';
import type { EventClaims } from './event-claims.ts';
import { agentKey, CountedSessions, markSessionFirsts } from './session-firsts.ts';

export interface UsageItem {
  readonly record: UsageRecord;
  readonly source: RecordSource;
}

export interface UsageRowsDeps {
  /** Where stored event ids are looked up. */
  readonly ch: ClickHouse;
  readonly card: RateCard;
  /** The built-in prices beneath the card; null or absent: the card alone. */
  readonly catalogs?: Catalogs | null;
  /** null in the embedded mode: one writer, one round at a time, a round replayed only after a restart. */
  readonly claims: EventClaims | null;
  /** The sessions found counted before, not looked up again; absent: every session is looked up. */
  readonly counted?: CountedSessions;
}

/** The usage events of one batch of a round, claimed under the batch's own token. */
export interface UsageGroup<I extends UsageItem = UsageItem> {
  readonly items: readonly I[];
  /** The batch token its events are claimed under: the same when the batch is replayed. */
  readonly claimToken: string;
  /** The batch may be stored already under another token: its stored events are left out whoever claimed them. */
  readonly storedWins: boolean;
}

/** A round's usage rows, and the claims each batch holds: released once the round is stored. */
export interface DecidedUsage<I extends UsageItem = UsageItem> {
  readonly rows: readonly { readonly row: UsageEventRow; readonly item: I }[];
  readonly claimed: readonly { readonly token: string; readonly keys: readonly string[] }[];
}

/**
 * The usage_events rows of a round, each event id once per tenant: the first of a batch wins, an id
 * claimed by another batch in flight is a client retry, and an id nobody holds is looked up among the
 * stored events (claims are released once their round is stored, and Redis may be flushed). Every
 * decision is the same when the batch is replayed. A batch with `storedWins` (replayed after the
 * views were rebuilt, or regrouped out of the round it was planned in) leaves out its stored events
 * even when it claimed them. The lookup runs after the claims: a claim taken fresh after another
 * round released it is then always answered by a lookup that sees that round's insert. One lookup
 * serves the whole round; each batch claims apart, under its own token.
 *
 * A claim the batch holds from an earlier try (kept, not fresh) does not say what that try decided: it
 * may have kept the event, and stored it in some tables before it failed, or found another copy
 * stored and died before it let the claim go. So such an event is looked up with the places of its
 * stored rows: stored at this very message, it is the batch's own insert and kept (the replay is the
 * same insert); stored from another message, it is a client's copy and left out.
 */
export async function usageRows<I extends UsageItem>(
  { ch, card, catalogs = null, claims, counted = new CountedSessions(0) }: UsageRowsDeps,
  groups: readonly UsageGroup<I>[],
): Promise<DecidedUsage<I>> {
  // An event id deduplicates within its tenant only: another tenant's event of the same id is another event.
  const firsts = groups.map(({ items }) => {
    const byKey = new Map<string, I>();
    for (const item of items) {
      const key = eventKey(item.record.user_id, item.record.event_id);
      if (!byKey.has(key)) byKey.set(key, item);
    }
    return byKey;
  });
  const decisions = await Promise.all(
    groups.map(({ claimToken }, i) => {
      const keys = [...firsts[i]!.keys()];
      return claims === null ? { kept: new Set(keys), fresh: new Set(keys) } : claims.claim(keys, claimToken);
    }),
  );
  // A claim kept from an earlier try (not fresh) is asked where its event is stored; any other, whether it is.
  const replayed = (i: number, key: string) =>
    !groups[i]!.storedWins && decisions[i]!.kept.has(key) && !decisions[i]!.fresh.has(key);
  const asked = firsts.flatMap((byKey, i) =>
    [...byKey].filter(([key]) => groups[i]!.storedWins || decisions[i]!.fresh.has(key)).map(([, { record }]) => record),
  );
  const askedWhere = firsts.flatMap((byKey, i) =>
    [...byKey].filter(([key]) => replayed(i, key)).map(([, { record }]) => record),
  );
  // Every session the round may store and not found counted before, alone or under the event's agent,
  // is asked for its marked rows beside the events' lookups.
  const sessions = new Map(
    firsts.flatMap((byKey) =>
      [...byKey.values()].flatMap(({ record }) => {
        const key = sessionKey(record.user_id, record.session_id);
        return counted.has(key) && counted.has(agentKey(key, record.agent_id ?? '')) ? [] : [[key, record] as const];
      }),
    ),
  );
  const [stored, places, marked] = await Promise.all([
    asked.length === 0 ? new Set<string>() : storedEventKeys(ch, asked),
    askedWhere.length === 0 ? new Map<string, RecordSource[]>() : storedEventPlaces(ch, askedWhere),
    sessions.size === 0 ? new Map<string, SessionMark[]>() : storedSessionMarks(ch, [...sessions.values()]),
  ]);
  if (claims === null) await confirmInSource(ch, groups, firsts, stored);
  const storedElsewhere = (key: string, { source }: I) =>
    (places.get(key) ?? []).some(({ partition, offset }) => partition !== source.partition || offset !== source.offset);
  // Without claims (the embedded mode) the first batch holding an id keeps it; with them, the one whose claim holds.
  const taken = new Set<string>();
  const rows: { readonly row: UsageEventRow; readonly item: I }[] = [];
  const claimed = groups.map(({ claimToken }) => ({ token: claimToken, keys: [] as string[], stored: [] as string[] }));
  groups.forEach(({ storedWins }, i) => {
    const { kept, fresh } = decisions[i]!;
    for (const [key, item] of firsts[i]!) {
      if (!kept.has(key)) continue;
      if (((storedWins || fresh.has(key)) && stored.has(key)) || (replayed(i, key) && storedElsewhere(key, item))) {
        claimed[i]!.stored.push(key);
        continue;
      }
      claimed[i]!.keys.push(key);
      if (taken.has(key)) continue;
      taken.add(key);
      rows.push({ row: toUsageRow(card, catalogs, item.record, item.source), item });
    }
  });
  const kept = markSessionFirsts(await withoutRepeatedReversals(ch, rows), marked, counted);
  counted.remember(marked);
  if (claims === null) return { rows: kept, claimed: [] };
  // A claim held on an event found stored is let go at once: held, it would read on the next try as this
  // batch's own decision to keep the event (a kept claim that is not fresh is never looked up).
  await Promise.all(claimed.map(({ token, stored: found }) => claims.release(found, token)));
  return { rows: kept, claimed: claimed.map(({ token, keys }) => ({ token, keys })) };
}

/**
 * Leaves in `stored` only the events usage_events holds, of those the id index named for a batch that
 * is not `storedWins`; the index is read first because it answers by primary key, and usage_events is
 * read only when the index names any (a client's resend). The index is a view written beside
 * usage_events (parallel_view_processing): a round whose insert failed can leave it holding events
 * whose usage_events part was never committed. Without claims (the embedded journal's one writer) the
 * only round that can meet them is that round's replay, under its own token after a restart, and it
 * must keep them: the views that took them drop the repeat, and usage_events takes it. A batch with
 * `storedWins` replays after the views were rebuilt from usage_events, whose index is then exact.
 */
async function confirmInSource<I extends UsageItem>(
  ch: ClickHouse,
  groups: readonly UsageGroup<I>[],
  firsts: readonly Map<string, I>[],
  stored: Set<string>,
): Promise<void> {
  const named = firsts.flatMap((byKey, i) =>
    groups[i]!.storedWins ? [] : [...byKey].filter(([key]) => stored.has(key)).map(([, { record }]) => record),
  );
  if (named.length === 0) return;
  const held = await storedEventPlaces(ch, named);
  for (const { user_id, event_id } of named) {
    const key = eventKey(user_id, event_id);
    if (!held.has(key)) stored.delete(key);
  }
}

/**
 * A row is reversed once (docs/corrections.md): a correction whose reversal negates a row that a stored
 * reversal, or an earlier one of this round, negates already is left out whole (its replacement too).
 * Ingest lets one correction of an event run at a time, so this only meets two corrections that raced
 * past it (a Redis flushed between them): the first in the log wins, as on every replay.
 */
async function withoutRepeatedReversals<R extends { readonly row: UsageEventRow }>(
  ch: ClickHouse,
  rows: readonly R[],
): Promise<R[]> {
  const reversals = rows.filter(({ row }) => row.reverses !== null);
  if (reversals.length === 0) return [...rows];
  const stored = await storedReversals(
    ch,
    reversals.map(({ row }) => ({
      user_id: row.user_id,
      occurred_at: row.occurred_at,
      event_id: row.id,
      reverses: row.reverses!,
    })),
  );
  const negated = new Set<string>();
  const dropped = new Set<string>();
  for (const { row } of reversals) {
    const target = eventKey(row.user_id, row.reverses!);
    const byOthers = (stored.get(target) ?? []).some((reversal) => reversal !== row.id);
    if (byOthers || negated.has(target)) dropped.add(row.correction_id!);
    else negated.add(target);
  }
  return rows.filter(({ row }) => row.correction_id === null || !dropped.has(row.correction_id));
}

function toUsageRow(
  card: RateCard,
  catalogs: Catalogs | null,
  record: UsageRecord,
  source: RecordSource,
): UsageEventRow {
  // A correction's reversal is stored at the reversed row's price negated, a repricing at the price ingest gave it.
  return (
    correctionRow(record, source) ??
    usageEventRow(record, priceUsage(card, { ...record, occurred_at: new Date(record.occurred_at) }, catalogs), source)
  );
}
