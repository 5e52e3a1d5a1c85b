import { describe, expect, it } from 'vitest';
import { makeSessionEnvelope, makeUsageEnvelope } from '../../../test/support/records.ts';
import type { DecodedBatch, RoundItem } from '../round.ts';
import { routeRecords } from './route-records.ts';

const item = (envelope: RoundItem['envelope'], offset: number): RoundItem => ({
  envelope,
  source: { partition: 2, offset: String(offset) },
  at: `usage/2/${offset}`,
});
const batch = (items: RoundItem[], token: string, uncertain = false): DecodedBatch => ({ items, token, uncertain });

describe('routeRecords', () => {
  it('makes every kind but usage its table row, each with the record it came from', () => {
    const session = item(makeSessionEnvelope({ room_name: 'room-a' }), 1);
    const { tables, usage } = routeRecords([batch([session], 'b1')], () => false);

    expect([...tables.keys()]).toEqual(['sessions']);
    const [entry] = tables.get('sessions')!;
    expect(entry!.origin).toBe(session);
    expect(entry!.row).toMatchObject({ room_name: 'room-a', kafka_partition: 2, kafka_offset: '1' });
    expect(usage).toEqual([]);
  });

  it('groups usage per batch under the batch token, and says which batches leave their stored events out', () => {
    const a = [item(makeUsageEnvelope(), 1), item(makeUsageEnvelope(), 2)];
    const b = [item(makeUsageEnvelope(), 3)];
    const sessionsOnly = batch([item(makeSessionEnvelope(), 4)], 'b3');
    const { tables, usage } = routeRecords([batch(a, 'b1'), sessionsOnly, batch(b, 'b2', true)], (it) => it.uncertain);

    expect(tables.has('usageEvents')).toBe(false);
    expect(usage.map(({ claimToken, storedWins, items }) => [claimToken, storedWins, items.length])).toEqual([
      ['b1', false, 2],
      ['b2', true, 1],
    ]);
    expect(usage[0]!.items[1]).toEqual({ record: a[1]!.envelope.payload, source: a[1]!.source, origin: a[1] });
  });
});
