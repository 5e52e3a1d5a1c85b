import { describe, expect, it } from 'vitest';
import { batchToken, decodePlan, encodePlan, plannedTokens } from './offset-plan.ts';

describe('offset plans', () => {
  it('round-trips a plan and ignores metadata that is not one', () => {
    expect(decodePlan('10', encodePlan('19'))).toEqual({ first: '10', last: '19' });
    for (const metadata of [null, undefined, '', 'x', '{"last":19}', '{"last":"-1"}'])
      expect(decodePlan('10', metadata)).toBeNull();
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
