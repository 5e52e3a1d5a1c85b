import type { RateRecord } from '../../records/payloads.ts';
import { Exact } from '../../exact-decimal.ts';
import type { ClickHouse } from '../client.ts';
import { tableName } from '../tables.ts';

/** rate_entries: the tenants' own prices, every version (ReplacingMergeTree by version). Read by every pricing process. */
export type RateEntryRow = RateRecord & { readonly record_id: string };

export function rateEntryRow(rate: RateRecord, recordId: string): RateEntryRow {
  return { ...rate, record_id: recordId };
}

/** The stored form of a tenant's entry (rate_entries, the highest version of each id). */
export type StoredRate = Omit<RateRecord, 'version' | 'created_at'> & {
  readonly version: number;
  readonly created_at: string;
};

/** Every tenant entry, its highest version, read fresh from ClickHouse. */
export async function readRateEntries(ch: ClickHouse, id?: string): Promise<StoredRate[]> {
  const result = await ch.client.query({
    query: `SELECT id, user_id, provider, model, event_type, service, toString(pricing) AS pricing, unit, toString(price) AS price, toString(price_per) AS price_per,
        toString(currency) AS currency, toString(toUnixTimestamp64Milli(effective_from)) AS from_ms,
        if(effective_to IS NULL, NULL, toString(toUnixTimestamp64Milli(assumeNotNull(effective_to)))) AS to_ms,
        toString(toUnixTimestamp64Milli(created_at)) AS created_ms, toString(version) AS version
      FROM ${tableName(ch, 'rateEntries')} FINAL ${id === undefined ? '' : 'WHERE id = {id:String}'}
      ORDER BY id`,
    query_params: id === undefined ? {} : { id },
    format: 'JSONEachRow',
  });
  type Row = Omit<StoredRate, 'version' | 'effective_from' | 'effective_to' | 'created_at'> & {
    version: string;
    from_ms: string;
    to_ms: string | null;
    created_ms: string;
  };
  const iso = (ms: string) => new Date(Number(ms)).toISOString();
  return (await result.json<Row>()).map(({ from_ms, to_ms, created_ms, version, ...row }) => ({
    ...row,
    price: new Exact(row.price).toFixed(),
    price_per: new Exact(row.price_per).toFixed(),
    version: Number(version),
    effective_from: iso(from_ms),
    effective_to: to_ms === null ? null : iso(to_ms),
    created_at: iso(created_ms),
  }));
}
