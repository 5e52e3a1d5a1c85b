import { describe, expect, it } from 'vitest';
import { toCostCard } from './session-cost-card.ts';

describe('toCostCard', () => {
  it('answers the call page’s numbers, with the exact decimal strings beside them', () => {
    const card = toCostCard({
      session_id: 's-1',
      total_cost: '0.0000006',
      currency: 'USD',
      live: false,
      items: [
        {
          provider: 'deepgram',
          service: 'stt',
          event_type: 'stt_minutes',
          quantity: '1.5',
          unit: 'minutes',
          cost: '0.0000006',
          parts: [],
        },
      ],
    });
    expect(card).toEqual({
      session_id: 's-1',
      total_cost: 6e-7,
      breakdown: [
        {
          provider: 'deepgram',
          service: 'stt',
          units: 1.5,
          unit_label: 'minutes',
          cost: 6e-7,
          event_type: 'stt_minutes',
          units_exact: '1.5',
          cost_exact: '0.0000006',
        },
      ],
      total_cost_exact: '0.0000006',
      currency: 'USD',
      live: false,
    });
    expect(card.total_cost.toFixed(4)).toBe('0.0000');
  });

  it('answers an empty breakdown and a zero total for a call without usage', () => {
    expect(toCostCard({ session_id: 's-2', total_cost: '0', currency: 'USD', live: true, items: [] })).toMatchObject({
      total_cost: 0,
      breakdown: [],
      total_cost_exact: '0',
    });
  });
});
