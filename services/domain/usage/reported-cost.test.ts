import { describe, expect, it } from 'vitest';
import { reportedCostProblems } from './reported-cost.ts';

describe('reportedCostProblems', () => {
  it('refuses a quantity × unit_cost over 10^6 when no total_cost is sent, the reproduction of 10^12 × 10^6 included', () => {
    expect(reportedCostProblems('1000000000000', { unit_cost: '1000000' })).toEqual([
      {
        type: 'value_error',
        loc: ['body', 'unit_cost'],
        msg: 'Value error, quantity × unit_cost is 1000000000000000000, over the limit of 1000000 for one event',
        input: '1000000',
        ctx: { error: {} },
      },
    ]);
    expect(reportedCostProblems('1000000000000', { unit_cost: '0.000001' })).toEqual([]);
    expect(reportedCostProblems('1000000000000', { unit_cost: '0.000001000000000001' })).toHaveLength(1);
  });

  it('lets total_cost decide the cost when both are sent: the unit cost is then the one sent', () => {
    expect(reportedCostProblems('1000000000000', { unit_cost: '1000000', total_cost: '1000000' })).toEqual([]);
  });

  it('refuses a total_cost alone whose unit cost (total ÷ quantity) would be over 10^6', () => {
    expect(reportedCostProblems('0.000000000000000001', { total_cost: '1' })).toMatchObject([
      { loc: ['body', 'total_cost'] },
    ]);
    expect(reportedCostProblems('1', { total_cost: '1000000' })).toEqual([]);
    expect(reportedCostProblems('0', { total_cost: '1000000' })).toEqual([]);
  });
});
