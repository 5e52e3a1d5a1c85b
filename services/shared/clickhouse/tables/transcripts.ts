import type { TranscriptRecord } from '../../../domain/records/index.ts';

/** transcripts (one row per turn). Reads: services/ingest/transcripts/transcript-history.ts. */
export type TranscriptRow = TranscriptRecord & { readonly record_id: string };

export function transcriptRow(turn: TranscriptRecord, recordId: string): TranscriptRow {
  return { ...turn, record_id: recordId };
}
