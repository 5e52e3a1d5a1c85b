import { describe, expect, it } from 'vitest';
import { T0 } from '../sessions/session.fixtures.ts';
import { monotonicClock, toTranscriptResponse, transcriptEnvelope, type Transcript } from './transcript.ts';

const turn: Transcript = {
  id: '6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10',
  session_id: 'b1b2c3d4-0000-4000-8000-000000000001',
  content: 'Hello',
  speaker: 'AGENT',
  timestamp: T0,
};

describe('transcript turns', () => {
  it('answers the old TranscriptResponse keys in their order', () => {
    expect(JSON.stringify(toTranscriptResponse(turn))).toBe(
      '{"content":"Hello","speaker":"AGENT","id":"6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10","session_id":"b1b2c3d4-0000-4000-8000-000000000001","timestamp":"2026-11-22T01:29:17.578Z"}',
    );
  });

  it('makes a transcript record keyed by the session, its timestamp in ISO form', () => {
    const envelope = transcriptEnvelope(turn, T0 + 1);
    expect(envelope).toMatchObject({
      kind: 'transcript',
      key: turn.session_id,
      occurred_at: '2026-11-22T01:29:17.578Z',
      payload: { ...turn, timestamp: '2026-11-22T01:29:17.578Z' },
    });
  });

  it('refuses to publish a record its schema refuses', () => {
    expect(() => transcriptEnvelope({ ...turn, speaker: 'BOT' as 'USER' }, T0)).toThrow(/invalid transcript record/);
  });

  it('gives turns of one process strictly later milliseconds, even within one millisecond or a clock step back', () => {
    const times = [T0, T0, T0, T0 - 5, T0 + 10];
    const clock = monotonicClock(() => times.shift()!);
    expect([clock(), clock(), clock(), clock(), clock()]).toEqual([T0, T0 + 1, T0 + 2, T0 + 3, T0 + 10]);
  });
});
