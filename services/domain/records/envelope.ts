import { randomUUID } from 'node:crypto';
import { envelopeSchema, type Envelope, type RecordKind } from '../../../schemas/records/envelope.ts';
import type { EncodedRecord } from '../../shared/kafka/encoded-record.ts';
import { payloadProblem, recordAjv } from './payloads.ts';

export type { Envelope, RecordKind };

const validateEnvelope = recordAjv.compile(envelopeSchema);

/**
 * A record checked against the schemas before it leaves the producer, as the consumer checks it
 * after reading: one that fails is a defect of the producing code, so it throws (a 500 whose
 * details go to the log) instead of being published for the consumer to dead-letter.
 */
export function makeEnvelope(
  kind: RecordKind,
  key: string,
  payload: Record<string, unknown>,
  occurredAt: Date,
  receivedAt: Date,
  id = randomUUID(),
): Envelope {
  const envelope: Envelope = {
    schema_version: 1,
    id,
    kind,
    key,
    occurred_at: occurredAt.toISOString(),
    received_at: receivedAt.toISOString(),
    payload,
  };
  const problem = envelopeProblem(envelope);
  if (problem !== null) throw new Error(`refusing to publish an invalid ${kind} record: ${problem}`);
  return envelope;
}

function envelopeProblem(envelope: unknown): string | null {
  if (!validateEnvelope(envelope)) {
    const first = validateEnvelope.errors?.[0];
    return `invalid envelope: ${first?.instancePath || '/'} ${first?.message ?? ''}`.trim();
  }
  return payloadProblem(envelope.kind, envelope.payload);
}

export function encodeRecord(envelope: Envelope): EncodedRecord {
  return {
    key: envelope.key,
    value: JSON.stringify(envelope),
    headers: { kind: envelope.kind, schema_version: String(envelope.schema_version), record_id: envelope.id },
  };
}

export type Decoded =
  { readonly ok: true; readonly envelope: Envelope } | { readonly ok: false; readonly reason: string };

/** Never throws: a record that cannot be read is a reason for the DLQ, not a crash. */
export function decodeRecord(value: Buffer | null): Decoded {
  if (value === null) return { ok: false, reason: 'empty record value' };
  let parsed: unknown;
  try {
    parsed = JSON.parse(value.toString('utf8'));
  } catch {
    return { ok: false, reason: 'record value is not JSON' };
  }
  const problem = envelopeProblem(parsed);
  return problem === null ? { ok: true, envelope: parsed as Envelope } : { ok: false, reason: problem };
}
