import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import type { UsageRecord } from '../../shared/records/payloads.ts';
import { priceUsage } from '../../shared/pricing/price-usage.ts';
import type { RateCard } from '../../shared/pricing/load-rate-card.ts';
import type { Catalogs } from '../../shared/pricing/catalogs.ts';
import type { RecordSource } from '../record-rows.ts';
import type { EventClaims } from './event-claims.ts';
import { eventKey } from './event-key.ts';
import { storedEventIds } from './stored-event-ids.ts';

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
export async function usageRows({ ch, card, catalogs = null, claims }: UsageRowsDeps, items: readonly UsageItem[], token: string, { storedWins = false } = {}): Promise<Record<string, unknown>[]> {
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
    storedEventIds(ch, [...firsts.values()].map(({ record }) => record)),
  ]);
  return [...firsts]
    .filter(([key]) => kept.has(key) && !((storedWins || fresh.has(key)) && stored.has(key)))
    .map(([, { record, source }]) => toUsageRow(card, catalogs, record, source));
}

function toUsageRow(card: RateCard, catalogs: Catalogs | null, record: UsageRecord, source: RecordSource): Record<string, unknown> {
  const priced = priceUsage(card, { ...record, occurred_at: new Date(record.occurred_at) }, catalogs);
  return {
    id: record.event_id,
    user_id: record.user_id,
    agent_id: record.agent_id ?? '',
    session_id: record.session_id,
    provider: record.provider,
    service: priced.service,
    event_type: record.event_type,
    model: record.model ?? '',
    quantity: priced.quantity,
    unit: priced.unit,
    unit_cost: priced.unit_cost,
    cost: priced.cost,
    reported_unit_cost: record.reported_unit_cost,
    reported_total_cost: record.reported_total_cost,
    cost_source: priced.cost_source,
    rate_id: priced.rate_id,
    currency: priced.currency,
    needs_reconciliation: priced.reconcile,
    input_tokens: record.input_tokens,
    output_tokens: record.output_tokens,
    cached_input_tokens: record.cached_input_tokens ?? null,
    cache_write_tokens: record.cache_write_tokens ?? null,
    audio_input_tokens: record.audio_input_tokens ?? null,
    cached_audio_input_tokens: record.cached_audio_input_tokens ?? null,
    audio_output_tokens: record.audio_output_tokens ?? null,
    reasoning_tokens: record.reasoning_tokens ?? null,
    price_scope: priced.scope ?? '',
    cost_components: priced.components,
    occurred_at: record.occurred_at,
    received_at: record.received_at,
    kafka_partition: source.partition,
    kafka_offset: source.offset,
  };
}
