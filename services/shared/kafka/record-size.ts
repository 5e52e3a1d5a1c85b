import type { IHeaders } from 'kafkajs';
import type { EncodedRecord } from './encoded-record.ts';
import { chunkBySize } from '../chunk-by-size.ts';

export interface Outgoing {
  readonly topic: string;
  readonly record: EncodedRecord;
}

// Per-record framing in a v2 record batch (length, attributes, deltas, varint lengths): at most
// about 20 bytes plus the header count; rounded up so that estimates never fall short.
const RECORD_OVERHEAD_BYTES = 32;

const byteLength = (value: string | Buffer): number =>
  typeof value === 'string' ? Buffer.byteLength(value) : value.length;

/** An upper estimate of the bytes one record takes in a produce request. */
export function outgoingBytes({ record }: Outgoing): number {
  return RECORD_OVERHEAD_BYTES + byteLength(record.key) + byteLength(record.value) + headerBytes(record.headers);
}

function headerBytes(headers: IHeaders): number {
  let total = 0;
  for (const [name, value] of Object.entries(headers)) {
    const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
    for (const one of values) total += RECORD_OVERHEAD_BYTES + Buffer.byteLength(name) + byteLength(one);
  }
  return total;
}

/** Consecutive runs of at most maxBytes, in order; a record larger than that is a run of its own. */
export function chunkByBytes(outgoing: readonly Outgoing[], maxBytes: number): Outgoing[][] {
  return chunkBySize(outgoing, outgoingBytes, maxBytes);
}

const TOO_LARGE = new Set(['MESSAGE_TOO_LARGE', 'RECORD_LIST_TOO_LARGE']);

/** kafkajs wraps the broker's answer (KafkaJSNonRetriableError, cause: KafkaJSProtocolError). */
export function isRecordTooLarge(error: unknown): boolean {
  return hasErrorType(error, TOO_LARGE);
}

function hasErrorType(error: unknown, types: ReadonlySet<string>): boolean {
  for (let current = error, depth = 0; typeof current === 'object' && current !== null && depth < 5; depth++) {
    const { type, cause } = current as { type?: unknown; cause?: unknown };
    if (typeof type === 'string' && types.has(type)) return true;
    current = cause;
  }
  return false;
}
