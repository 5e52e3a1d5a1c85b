import type { ClickHouseClient, InsertParams } from '@clickhouse/client';
import { describe, expect, it } from 'vitest';
import type { ClickHouse } from './client.ts';
import { insertRows } from './insert-rows.ts';
import type { DeadLetterRow } from './tables/dead-letters.ts';

/** A client that keeps what each insert would have sent. */
function recordingClickHouse() {
  const inserts: InsertParams[] = [];
  const client = {
    insert: (params: InsertParams) => {
      inserts.push(params);
      return Promise.resolve();
    },
  } as unknown as ClickHouseClient;
  const ch: ClickHouse = { client, database: 'callmeter', embedded: true, cluster: null };
  return { ch, inserts };
}

const letter = (offset: string, overrides: Partial<DeadLetterRow> = {}): DeadLetterRow => ({
  kind: 'usage',
  reason: 'not JSON',
  topic: 'callmeter.usage.v1',
  kafka_partition: 3,
  kafka_offset: offset,
  record: '{',
  ...overrides,
});

/** The same row with its last column first. */
const reordered = (row: DeadLetterRow): DeadLetterRow => {
  const { record, ...rest } = row;
  return { record, ...rest };
};

describe('insertRows', () => {
  it('sends rows of one shape as arrays under their column list, in the rows’ order, with the token per table', async () => {
    const { ch, inserts } = recordingClickHouse();
    await insertRows(ch, 'deadLetters', [letter('7'), letter('8', { reason: 'bad' })], 'batch-1');
    expect(inserts).toHaveLength(1);
    const [insert] = inserts;
    expect(insert!.format).toBe('JSONCompactEachRow');
    expect(insert!.columns).toEqual(['kind', 'reason', 'topic', 'kafka_partition', 'kafka_offset', 'record']);
    expect(insert!.values).toEqual([
      ['usage', 'not JSON', 'callmeter.usage.v1', 3, '7', '{'],
      ['usage', 'bad', 'callmeter.usage.v1', 3, '8', '{'],
    ]);
    expect(insert!.clickhouse_settings?.insert_deduplication_token).toBe('batch-1:deadLetters');
  });

  it('falls back to keyed rows when a row has other columns, another order or an undefined value', async () => {
    const shapes: DeadLetterRow[][] = [
      [letter('1'), { ...letter('2'), extra: 1 } as DeadLetterRow],
      [letter('1'), reordered(letter('2'))],
      [letter('1'), letter('2', { reason: undefined as unknown as string })],
    ];
    for (const rows of shapes) {
      const { ch, inserts } = recordingClickHouse();
      await insertRows(ch, 'deadLetters', rows, 'batch-2');
      expect(inserts[0]!.format).toBe('JSONEachRow');
      expect(inserts[0]!.values).toEqual(rows);
      expect(inserts[0]!.columns).toBeUndefined();
    }
  });

  it('sends nothing for no rows', async () => {
    const { ch, inserts } = recordingClickHouse();
    await insertRows(ch, 'deadLetters', [], 'batch-3');
    expect(inserts).toEqual([]);
  });
});
