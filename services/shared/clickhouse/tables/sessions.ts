import type { SessionRecord } from '../../../domain/records/index.ts';
import type { RecordSource } from './usage-events.ts';

/**
 * sessions (every version of every session; sessions_current, sessions_by_user and sessions_by_room
 * are its views, migrations 002, 007 and 011). Reads: the ingest history
 * (services/ingest/sessions/session-history.ts) and the cost queries (services/query/queries/).
 */
export type SessionRow = Omit<SessionRecord, 'session_data' | 'analysis'> & {
  readonly session_data: string;
  readonly analysis: string | null;
  readonly record_id: string;
  readonly kafka_partition: number;
  readonly kafka_offset: string;
};

export function sessionRow(session: SessionRecord, recordId: string, source: RecordSource): SessionRow {
  return {
    ...session,
    session_data: JSON.stringify(session.session_data),
    analysis: session.analysis === null ? null : JSON.stringify(session.analysis),
    record_id: recordId,
    kafka_partition: source.partition,
    kafka_offset: source.offset,
  };
}
