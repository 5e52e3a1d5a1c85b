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

/**
 * The usage_events rows of a batch, each event id once per tenant: the first of a batch wins, an id
 * claimed by another batch is a client retry, and an id nobody claimed is looked up among the stored events
 * (claims expire, Redis may be flushed). Every decision is the same when the batch is replayed.
 * With `storedWins` (a batch replayed after the views were rebuilt) a stored event is left out even
 * when this batch claimed it.
 */
export async function usageRows(
  { ch, card, catalogs = null, claims }: UsageRowsDeps,
  items: readonly UsageItem[],
  token: string,
  { storedWins = false } = {},
): Promise<UsageEventRow[]> {
  // An event id deduplicates within its tenant only: another tenant's event of the same id is another event.
  const firsts = new Map<string, UsageItem>();
  for (const item of items) {
    const key = eventKey(item.record.user_id, item.record.event_id);
    if (!firsts.has(key)) firsts.set(key, item);
  }
  const keys = [...firsts.keys()];
  // Asked side by side: the lookup answers for every event, and only the freshly claimed ones use it.
  const [{ kept, fresh }, stored] = await Promise.all([
    claims === null ? { kept: new Set(keys), fresh: new Set(keys) } : claims.claim(keys, token),
    storedEventKeys(
      ch,
      [...firsts.values()].map(({ record }) => record),
    ),
  ]);
  return [...firsts]
    .filter(([key]) => kept.has(key) && !((storedWins || fresh.has(key)) && stored.has(key)))
    .map(([, { record, source }]) => toUsageRow(card, catalogs, record, source));
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
