import type { TranscriptRecord } from '../../domain/records/index.ts';
import { makeEnvelope, type Envelope } from '../../domain/records/index.ts';

export type Speaker = TranscriptRecord['speaker'];

/** One turn of a call's transcript; `timestamp` in epoch milliseconds. */
export interface Transcript {
  readonly id: string;
  readonly session_id: string;
  readonly content: string;
  readonly speaker: Speaker;
  readonly timestamp: number;
}

/** The old TranscriptResponse, in its key order: content, speaker, id, session_id, timestamp. */
export function toTranscriptResponse(turn: Transcript) {
  return {
    content: turn.content,
    speaker: turn.speaker,
    id: turn.id,
    session_id: turn.session_id,
    timestamp: new Date(turn.timestamp).toISOString(),
  };
}

/** The record of one turn, keyed by its session so that it stays in order with the session's records. */
export function transcriptEnvelope(turn: Transcript, receivedAtMs: number): Envelope {
  const record: TranscriptRecord = { ...turn, timestamp: new Date(turn.timestamp).toISOString() };
  return makeEnvelope('transcript', turn.session_id, record, new Date(turn.timestamp), new Date(receivedAtMs));
}

/**
 * Turns are read oldest first by timestamp: the turns a worker posts one after another must never
 * share a millisecond, or two of them could read back swapped. Each turn of a process takes a
 * later millisecond than the one before it (the clock, or the last one plus one).
 */
export function monotonicClock(now: () => number): () => number {
  let last = -Infinity;
  return () => (last = Math.max(now(), last + 1));
}
