import type { RateRecord } from '../../../../schemas/records/rate.ts';
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

const COLUMNS = `id, user_id, provider, model, event_type, service, toString(pricing) AS pricing, unit, toString(price) AS price, toString(price_per) AS price_per,
        toString(currency) AS currency, toString(toUnixTimestamp64Milli(effective_from)) AS from_ms,
        if(effective_to IS NULL, NULL, toString(toUnixTimestamp64Milli(assumeNotNull(effective_to)))) AS to_ms,
        toString(toUnixTimestamp64Milli(created_at)) AS created_ms, toString(version) AS version,
        toString(toUnixTimestamp64Milli(stored_at)) AS stored_ms`;

type Row = Omit<StoredRate, 'version' | 'effective_from' | 'effective_to' | 'created_at'> & {
  version: string;
  from_ms: string;
  to_ms: string | null;
  created_ms: string;
  stored_ms: string;
};

/** One tenant entry, its highest version, read fresh from ClickHouse (null: none). */
export async function readRateEntry(ch: ClickHouse, id: string): Promise<StoredRate | null> {
  const result = await ch.client.query({
    query: `SELECT ${COLUMNS} FROM ${tableName(ch, 'rateEntries')} FINAL WHERE id = {id:String}`,
    query_params: { id },
    format: 'JSONEachRow',
  });
  const [row] = await result.json<Row>();
  return row === undefined ? null : fromRow(row).rate;
}

/** A version of an entry, and when the store took it (its clock: what the next read starts from). */
export interface RateEntryChange {
  readonly rate: StoredRate;
  readonly storedMs: number;
}

/** What one read found, and the store's clock when it began (a version stored before then is seen by a later read). */
export interface RateEntryChanges {
  readonly changes: RateEntryChange[];
  readonly readMs: number;
}

/**
 * The versions stored at or after `sinceMs` (every one for null), not merged: the reader keeps the highest
 * version of each id, so a version read twice, or an older one read after a newer, changes nothing.
 */
export async function readRateEntryChanges(ch: ClickHouse, sinceMs: number | null): Promise<RateEntryChanges> {
  const clock = await ch.client.query({
    query: 'SELECT toString(toUnixTimestamp64Milli(now64(3))) AS now_ms',
    format: 'JSONEachRow',
  });
  const [{ now_ms } = { now_ms: '0' }] = await clock.json<{ now_ms: string }>();
  const result = await ch.client.query({
    query: `SELECT ${COLUMNS} FROM ${tableName(ch, 'rateEntries')}
      ${sinceMs === null ? '' : 'WHERE stored_at >= fromUnixTimestamp64Milli({since:Int64})'}
      ORDER BY id, version`,
    query_params: sinceMs === null ? {} : { since: sinceMs },
    format: 'JSONEachRow',
  });
  return { changes: (await result.json<Row>()).map(fromRow), readMs: Number(now_ms) };
}

function fromRow({ from_ms, to_ms, created_ms, stored_ms, version, ...row }: Row): RateEntryChange {
  const iso = (ms: string) => new Date(Number(ms)).toISOString();
  return {
    rate: {
      ...row,
      price: new Exact(row.price).toFixed(),
      price_per: new Exact(row.price_per).toFixed(),
      version: Number(version),
      effective_from: iso(from_ms),
      effective_to: to_ms === null ? null : iso(to_ms),
      created_at: iso(created_ms),
    },
    storedMs: Number(stored_ms),
  };
}
