import type { TableKey } from '../shared/clickhouse/tables.ts';
import type { Envelope } from '../shared/records/envelope.ts';
import type { AgentRecord, ApiKeyRecord, AuditRecord, RateRecord, SessionRecord, TelephonyNumberRecord, TranscriptRecord } from '../shared/records/payloads.ts';

/** Where a record came from: its Kafka partition and offset, or -1 on the embedded direct path. */
export interface RecordSource {
  readonly partition: number;
  readonly offset: string;
}

export interface TableRow {
  readonly table: TableKey;
  readonly row: Record<string, unknown>;
}

/** Usage is priced and deduplicated per batch (usage/usage-rows.ts); every other kind maps alone. */
export type SingleRowEnvelope = Envelope & { readonly kind: Exclude<Envelope['kind'], 'usage'> };

/** The ClickHouse row of a validated record: one pure mapping per kind. */
export function toTableRow(envelope: SingleRowEnvelope, source: RecordSource): TableRow {
  switch (envelope.kind) {
    case 'session':
      return { table: 'sessions', row: sessionRow(envelope.payload as SessionRecord, envelope.id, source) };
    case 'telephony_number':
      return { table: 'telephonyNumbers', row: numberRow(envelope.payload as TelephonyNumberRecord, envelope.id) };
    case 'agent':
      return { table: 'agents', row: agentRow(envelope.payload as AgentRecord, envelope.id, source) };
    case 'transcript':
      return { table: 'transcripts', row: transcriptRow(envelope.payload as TranscriptRecord, envelope.id) };
    case 'rate':
      return { table: 'rateEntries', row: { ...(envelope.payload as RateRecord), record_id: envelope.id } };
    case 'api_key':
      return { table: 'apiKeys', row: { ...(envelope.payload as ApiKeyRecord), record_id: envelope.id } };
    case 'audit':
      return { table: 'auditLog', row: { ...(envelope.payload as AuditRecord), record_id: envelope.id } };
  }
}

function sessionRow(session: SessionRecord, recordId: string, source: RecordSource): Record<string, unknown> {
  return {
    ...session,
    session_data: JSON.stringify(session.session_data),
    analysis: session.analysis === null ? null : JSON.stringify(session.analysis),
    record_id: recordId,
    kafka_partition: source.partition,
    kafka_offset: source.offset,
  };
}

function numberRow(number: TelephonyNumberRecord, recordId: string): Record<string, unknown> {
  return { ...number, record_id: recordId };
}

function agentRow(agent: AgentRecord, recordId: string, source: RecordSource): Record<string, unknown> {
  return { ...agent, config: JSON.stringify(agent.config), record_id: recordId, kafka_partition: source.partition, kafka_offset: source.offset };
}

function transcriptRow(turn: TranscriptRecord, recordId: string): Record<string, unknown> {
  return { ...turn, record_id: recordId };
}
