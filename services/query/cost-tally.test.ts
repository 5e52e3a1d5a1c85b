import { describe, expect, it } from 'vitest';
import type { UsageEventType } from '../../schemas/http/usage-event.ts';
import { CostTally, money } from './cost-tally.ts';

const line = (provider: string, event_type: UsageEventType, cost_sum: string, quantity_sum = '1') => ({
  provider,
  service: event_type.slice(0, 3),
  event_type,
  unit: 'u',
  cost_sum,
  quantity_sum,
  events_sum: '2',
});

describe('the cost tally', () => {
  it('sums money exactly where floats would drift', () => {
    const tally = new CostTally();
    for (let i = 0; i < 10; i += 1) tally.add(line('deepgram', 'stt_minutes', '0.100000000000000000'));
    tally.add(line('google', 'llm_tokens', '0.000000300000000000'));
    expect(money(tally.totalCost)).toBe('1.0000003');
    expect(tally.byProvider()).toEqual({ deepgram: '1', google: '0.0000003' });
    expect(tally.events).toBe(22);
  });

  it('keeps every decimal of a total past 20 significant digits', () => {
    const tally = new CostTally();
    tally.add(line('acme', 'tts_characters', '1234.567891234567891234'));
    tally.add(line('acme', 'tts_characters', '0.000000000000000001'));
    tally.add(line('resemble', 'tts_characters', '98765.432109876543210987'));
    expect(money(tally.totalCost)).toBe('100000.000001111111102222');
    expect(tally.byProvider()).toEqual({ acme: '1234.567891234567891235', resemble: '98765.432109876543210987' });
  });

  it('groups services and orders providers by name', () => {
    const tally = new CostTally();
    tally.add(line('resemble', 'tts_characters', '0.5', '10'));
    tally.add(line('elevenlabs', 'stt_minutes', '0.25', '2'));
    tally.add(line('deepgram', 'stt_minutes', '0.25', '3'));
    expect(Object.keys(tally.byProvider())).toEqual(['deepgram', 'elevenlabs', 'resemble']);
    expect(tally.byService()).toEqual([
      { event_type: 'stt_minutes', service: 'stt', unit: 'u', quantity: '5', cost: '0.5' },
      { event_type: 'tts_characters', service: 'tts', unit: 'u', quantity: '10', cost: '0.5' },
    ]);
  });

  it('writes money without an exponent', () => {
    expect(money('0.000000000000000001')).toBe('0.000000000000000001');
    expect(money('0E-18')).toBe('0');
  });
});
