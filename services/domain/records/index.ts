/** The records module's public surface: code outside services/domain/records imports from here only. */
export { decodeRecord, encodeRecord, makeEnvelope, type Envelope } from './envelope.ts';
export { RecordJournal, type PlannedRound } from './journal.ts';
export {
  type AgentRecord,
  type PayloadOf,
  type RateRecord,
  type SessionRecord,
  type TelephonyNumberRecord,
  type TranscriptRecord,
  type UsageRecord,
} from './payloads.ts';
export { journalRecordSink, kafkaRecordSink, type RecordSink } from './record-sink.ts';
