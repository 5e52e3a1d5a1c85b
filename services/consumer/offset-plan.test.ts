import { describe, expect, it } from 'vitest';
import { batchToken, decodePlan, encodePlan, plannedTokens, roundToken } from './offset-plan.ts';

describe('offset plans', () => {
  it('round-trips a plan and ignores metadata that is not one', () => {
    expect(decodePlan('10', encodePlan('19'))).toEqual({ first: '10', last: '19' });
    for (const metadata of [null, undefined, '', 'x', '{"last":19}', '{"last":"-1"}'])
      expect(decodePlan('10', metadata)).toBeNull();
  });

  it('round-trips the round a batch was planned in, and drops a malformed one', () => {
    const round = { id: '0af3', members: 3, uncertain: false };
    expect(decodePlan('10', encodePlan('19', round))).toEqual({ first: '10', last: '19', round });
    expect(decodePlan('10', encodePlan('19', { ...round, uncertain: true }))?.round?.uncertain).toBe(true);
    expect(decodePlan('10', '{"last":"19","round":"0af3","members":0}')).toEqual({ first: '10', last: '19' });
    expect(decodePlan('10', '{"last":"19","round":"not hex","members":2}')).toEqual({ first: '10', last: '19' });
    expect(roundToken('g', 'usage', '0af3')).toBe('g:usage:round:0af3');
  });

  it('lists the tokens of the planned batches of a group, and only those', async () => {
    const admin = {
      fetchOffsets: async () => [
        {
          topic: 'usage',
          partitions: [
            { partition: 0, offset: '10', metadata: encodePlan('19') },
            { partition: 1, offset: '7', metadata: null },
            { partition: 2, offset: '-1', metadata: '' },
          ],
        },
        { topic: 'sessions', partitions: [{ partition: 3, offset: '0', metadata: encodePlan('4') }] },
      ],
    };
    const tokens = await plannedTokens(admin as never, 'g', ['usage', 'sessions']);
    expect([...tokens].sort()).toEqual(
      [batchToken('g', 'sessions', 3, '0', '4'), batchToken('g', 'usage', 0, '10', '19')].sort(),
    );
    expect(batchToken('g', 'usage', 0, '10', '19')).toBe('g:usage:0:10-19');
  });
});
