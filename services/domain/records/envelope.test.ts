import { describe, expect, it } from 'vitest';
import { decodeRecord, encodeRecord, makeEnvelope } from './envelope.ts';

const at = new Date('2026-11-23T10:00:00.000Z');
const usage = {
  event_id: '6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10' as const,
  session_id: '0b6f1c2d-9e1b-4a7f-8e9c-550d2f7e8a9b',
  user_id: 'user-1',
  agent_id: null,
  provider: 'deepgram',
  event_type: 'stt_minutes',
  model: null,
  quantity: '2.5',
  input_tokens: null,
  output_tokens: null,
  reported_unit_cost: null,
  reported_total_cost: null,
  occurred_at: at.toISOString(),
  received_at: at.toISOString(),
};

describe('record envelopes', () => {
  it('are validated on the producing side as the consumer validates them', () => {
    const envelope = makeEnvelope('usage', 'session-1', usage, at, at, usage.event_id);
    expect(decodeRecord(Buffer.from(encodeRecord(envelope).value))).toEqual({ ok: true, envelope });
  });

  it('refuse to carry a payload its kind’s schema rejects, instead of leaving it to the dead-letter queue', () => {
    expect(() => makeEnvelope('usage', 'session-1', { ...usage, quantity: 2.5 }, at, at)).toThrow(
      /refusing to publish an invalid usage record: invalid usage payload: \/quantity/,
    );
    expect(() => makeEnvelope('usage', '', usage, at, at)).toThrow(/invalid envelope: \/key/);
  });
});
