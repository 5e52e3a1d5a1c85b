import { describe, expect, it } from 'vitest';
import { fakeClickHouse, REFUSAL } from '../../../test/support/fake-clickhouse.ts';
import type { InsertedTable } from '../../shared/clickhouse/insert-rows.ts';
import { insertTables } from './insert-tables.ts';
import type { TableEntry } from './route-records.ts';

/** Rows for the agents table (only their `name` matters here), each with its origin. */
const entries = (names: readonly string[]) => names.map((name) => ({ row: { name } as never, origin: name }));
const tablesOf = (...pairs: [InsertedTable, TableEntry<string>[]][]) => new Map(pairs);

describe('insertTables', () => {
  it('inserts each table once under the round token', async () => {
    const { ch, inserts } = fakeClickHouse();
    const refused = await insertTables(
      ch,
      tablesOf(['agents', entries(['a', 'b'])], ['sessions', entries(['s'])]),
      'r1',
      {
        isolate: true,
      },
    );
    expect(refused).toEqual([]);
    expect(inserts.map(({ table, token, rows }) => [table, token, rows.length])).toEqual([
      ['agents', 'r1:agents', 2],
      ['sessions', 'r1:sessions', 1],
    ]);
  });

  it('isolating, splits off the rows ClickHouse refuses for what they hold and stores the rest', async () => {
    const { ch, inserts } = fakeClickHouse({ refuse: (row) => row.name === 'bad' });
    const refused = await insertTables(ch, tablesOf(['agents', entries(['a', 'bad', 'c'])]), 'r1', { isolate: true });
    expect(refused.map(({ item, reason }) => [item.origin, reason])).toEqual([
      ['bad', 'ClickHouse refused the record (TYPE_MISMATCH): Cannot parse input'],
    ]);
    expect(inserts.flatMap(({ rows }) => rows.map(({ name }) => name))).toEqual(['a', 'c']);
  });

  it('without isolation, fails the whole call on a refusal; an outage fails it either way', async () => {
    const refusing = fakeClickHouse({ refuse: (row) => row.name === 'bad' });
    await expect(
      insertTables(refusing.ch, tablesOf(['agents', entries(['a', 'bad'])]), 'r1', { isolate: false }),
    ).rejects.toBe(REFUSAL);
    const down = fakeClickHouse({ fail: () => new Error('connect ECONNREFUSED') });
    await expect(insertTables(down.ch, tablesOf(['agents', entries(['a'])]), 'r1', { isolate: true })).rejects.toThrow(
      'ECONNREFUSED',
    );
  });
});
