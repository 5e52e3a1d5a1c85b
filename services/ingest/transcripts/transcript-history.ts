import type { ClickHouse } from '../../shared/clickhouse/client.ts';
import { tableName } from '../../shared/clickhouse/tables.ts';
import type { Speaker, Transcript } from './transcript.ts';

/** The most turns one read answers, oldest first: a call of hours has a few thousand. */
export const MAX_TRANSCRIPT_TURNS = 10_000;

interface TranscriptRow {
  readonly turn_id: string;
  readonly session_id: string;
  readonly content: string;
  readonly speaker: Speaker;
  readonly at_ms: string;
}

/** A session's stored transcript. FINAL keeps one row of a turn delivered twice (009_transcripts.sql). */
export class TranscriptHistory {
  constructor(private readonly ch: ClickHouse) {}

  async list(sessionId: string, limit = MAX_TRANSCRIPT_TURNS): Promise<Transcript[]> {
    // The aliases differ from the column names, which ORDER BY would otherwise resolve to them.
    const result = await this.ch.client.query({
      query: `SELECT toString(id) AS turn_id, session_id, content, speaker, toUnixTimestamp64Milli(timestamp) AS at_ms
        FROM ${tableName(this.ch, 'transcripts')} FINAL
        WHERE session_id = {session:String} ORDER BY timestamp, id LIMIT {limit:UInt32}`,
      query_params: { session: sessionId, limit },
      format: 'JSONEachRow',
    });
    return (await result.json<TranscriptRow>()).map((row) => ({
      id: row.turn_id,
      session_id: row.session_id,
      content: row.content,
      speaker: row.speaker,
      timestamp: Number(row.at_ms),
    }));
  }
}
