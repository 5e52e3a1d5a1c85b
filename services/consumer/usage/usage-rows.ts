import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import type { UsageRecord } from '../../shared/records/payloads.ts';
import { priceUsage } from '../../shared/pricing/price-usage.ts';
import type { RateCard } from '../../shared/pricing/load-rate-card.ts';
import type { Catalogs } from '../../shared/pricing/catalogs.ts';
import {
  eventKey,
  storedEventKeys,
  usageEventRow,
  type RecordSource,
  type UsageEventRow,
} from '../../shared/clickhouse/tables/usage-events.ts';
import type { EventClaims } from './event-claims.ts';

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
  /** null in the embedded mode: one writer, flushes one at a time, nothing replayed. */
  readonly claims: EventClaims | null;
}

/** The usage events of one batch of a round, claimed under the batch's own token. */
export interface UsageGroup {
  readonly items: readonly UsageItem[];
  /** The batch token its events are claimed under: the same when the batch is replayed. */
  readonly claimToken: string;
  /** The batch may be stored already under another token: its stored events are left out whoever claimed them. */
  readonly storedWins: boolean;
}

/**
 * The usage_events rows of a round, each event id once per tenant: the first of a batch wins, an id
 * claimed by another batch is a client retry, and an id nobody claimed is looked up among the stored events
 * (claims expire, Redis may be flushed). Every decision is the same when the batch is replayed.
 * A batch with `storedWins` (replayed after the views were rebuilt, or regrouped out of the round it
 * was planned in) leaves out its stored events even when it claimed them. One lookup of the stored ids
 * serves the whole round; each batch claims apart, under its own token.
 */
export async function usageRows(
  { ch, card, catalogs = null, claims }: UsageRowsDeps,
  groups: readonly UsageGroup[],
): Promise<{ readonly row: UsageEventRow; readonly item: UsageItem }[]> {
  // An event id deduplicates within its tenant only: another tenant's event of the same id is another event.
  const firsts = groups.map(({ items }) => {
    const byKey = new Map<string, UsageItem>();
    for (const item of items) {
      const key = eventKey(item.record.user_id, item.record.event_id);
      if (!byKey.has(key)) byKey.set(key, item);
    }
    return byKey;
  });
  // Asked side by side: the lookup answers for every event, and only the freshly claimed ones use it.
  const [decisions, stored] = await Promise.all([
    Promise.all(
      groups.map(({ claimToken }, i) => {
        const keys = [...firsts[i]!.keys()];
        return claims === null ? { kept: new Set(keys), fresh: new Set(keys) } : claims.claim(keys, claimToken);
      }),
    ),
    storedEventKeys(
      ch,
      firsts.flatMap((byKey) => [...byKey.values()].map(({ record }) => record)),
    ),
  ]);
  // Without claims (the embedded mode) the first batch holding an id keeps it; with them, the one whose claim holds.
  const taken = new Set<string>();
  const rows: { readonly row: UsageEventRow; readonly item: UsageItem }[] = [];
  groups.forEach(({ storedWins }, i) => {
    const { kept, fresh } = decisions[i]!;
    for (const [key, item] of firsts[i]!) {
      if (taken.has(key) || !kept.has(key) || ((storedWins || fresh.has(key)) && stored.has(key))) continue;
      taken.add(key);
      rows.push({ row: toUsageRow(card, catalogs, item.record, item.source), item });
    }
  });
  return rows;
}

function toUsageRow(
  card: RateCard,
  catalogs: Catalogs | null,
  record: UsageRecord,
  source: RecordSource,
): UsageEventRow {
  return usageEventRow(
    record,
    priceUsage(card, { ...record, occurred_at: new Date(record.occurred_at) }, catalogs),
    source,
  );
}
