import { describe, expect, it } from 'vitest';
import { makeEnvelope } from '../domain/records/index.ts';
import { toTableRow, type SingleRowEnvelope } from './record-rows.ts';

const SOURCE = { partition: 0, offset: '7' };

describe('toTableRow', () => {
  it('stores a transcript turn in transcripts under its record id, its turn id kept for the replacing key', () => {
    const turn = {
      id: '6f1c2d9e-1b7a-4f3e-9c55-0d2f7e8a9b10',
      session_id: 'b1b2c3d4-0000-4000-8000-000000000001',
      content: 'Hi',
      speaker: 'USER' as const,
      timestamp: '2026-11-22T01:29:17.578Z',
    };
    const envelope = makeEnvelope(
      'transcript',
      turn.session_id,
      turn,
      new Date(turn.timestamp),
      new Date(turn.timestamp),
    );
    expect(toTableRow(envelope as SingleRowEnvelope, SOURCE)).toEqual({
      table: 'transcripts',
      row: { ...turn, record_id: envelope.id },
    });
  });
});
