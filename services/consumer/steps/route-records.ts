import type { InsertedRows, InsertedTable } from '../../shared/clickhouse/insert-rows.ts';
import type { UsageRecord } from '../../domain/records/index.ts';
import { toTableRow, type SingleRowEnvelope } from '../record-rows.ts';
import type { DecodedBatch, SourcedEnvelope } from '../round.ts';
import type { UsageGroup, UsageItem } from '../usage/usage-rows.ts';

/** A row for one table and the record it came from (to dead-letter that record when ClickHouse refuses the row). */
export interface TableEntry<O> {
  readonly row: InsertedRows[InsertedTable];
  readonly origin: O;
}

/** A usage event to decide (claim, look up, price), and the record it came from. */
export interface UsageOrigin<O> extends UsageItem {
  readonly origin: O;
}

export interface RoutedRound<O> {
  /** The rows of every kind but usage, by table. */
  readonly tables: Map<InsertedTable, TableEntry<O>[]>;
  /** The usage events of each batch that holds some, claimed under the batch's token. */
  readonly usage: readonly UsageGroup<UsageOrigin<O>>[];
}

/**
 * Step 2, route: every kind but usage becomes its table's row; usage events are grouped per batch, to be
 * claimed, deduplicated and priced together (usage/usage-rows.ts). `storedWins` says which batches leave
 * out their events that are stored already, whoever claimed them.
 */
export function routeRecords<O extends SourcedEnvelope>(
  batches: readonly DecodedBatch<O>[],
  storedWins: (batch: DecodedBatch<O>) => boolean,
): RoutedRound<O> {
  const tables = new Map<InsertedTable, TableEntry<O>[]>();
  const usage: UsageGroup<UsageOrigin<O>>[] = [];
  for (const batch of batches) {
    const items: UsageOrigin<O>[] = [];
    for (const origin of batch.items) {
      const { envelope, source } = origin;
      if (envelope.kind === 'usage') {
        items.push({ record: envelope.payload as UsageRecord, source, origin });
        continue;
      }
      const { table, row } = toTableRow(envelope as SingleRowEnvelope, source);
      const entries = tables.get(table);
      if (entries === undefined) tables.set(table, [{ row, origin }]);
      else entries.push({ row, origin });
    }
    if (items.length > 0) usage.push({ items, claimToken: batch.token, storedWins: storedWins(batch) });
  }
  return { tables, usage };
}
