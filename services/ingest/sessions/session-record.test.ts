import { describe, expect, it } from 'vitest';
import { sessionCreateBody } from '../../../schemas/http/session-create.ts';
import { sessionUpdateBody } from '../../../schemas/http/session-update.ts';
import { DEFAULT_MAX_BATCH_BYTES } from '../../shared/kafka/batching-producer.ts';
import { outgoingBytes } from '../../shared/kafka/record-size.ts';
import { encodeRecord } from '../../domain/records/index.ts';
import { compileRequest } from '../../shared/validation/compile-request.ts';
import { sessionEnvelope } from './session-record.ts';
import { makeSession, T0 } from './session.fixtures.ts';
import { jsonBytes, MAX_ANALYSIS_BYTES, MAX_SESSION_DATA_BYTES } from './session-limits.ts';

// One character to pydantic's max_length, but six bytes of JSON text (\u0001): more than any
// character takes in UTF-8 (at most four), so strings of it are the largest a bound lets in.
const WIDEST = '\u0001';
const jsonBytesPerChar = (char: string) => jsonBytes({ a: char.repeat(2) }) - jsonBytes({ a: char });
const longest = (maxLength: number) => WIDEST.repeat(maxLength);
/** An object whose JSON text is exactly `bytes` long. */
const jsonOf = (bytes: number) => ({ a: 'x'.repeat(bytes - jsonBytes({ a: '' })) });

const create = sessionCreateBody.properties;
const update = sessionUpdateBody.properties;

describe('the largest session the bounds let in', () => {
  const session = makeSession({
    room_name: longest(create.room_name.maxLength),
    user_id: longest(create.user_id.maxLength),
    agent_id: longest(create.agent_id.maxLength),
    session_data: jsonOf(MAX_SESSION_DATA_BYTES),
    status: 'COMPLETED',
    ended_at: T0 + 1,
    duration: update.duration.maximum,
    agent_name: longest(update.agent_name.maxLength),
    call_direction: 'OUTBOUND',
    outbound_phone_number: longest(update.outbound_phone_number.maxLength),
    call_status: 'NO_ANSWER',
    analysis: jsonOf(MAX_ANALYSIS_BYTES),
    transferred_to: longest(update.transferred_to.maxLength),
    transfer_type: 'WARM',
    transfer_timestamp: T0 + 2,
    version: Number.MAX_SAFE_INTEGER,
  });

  it('is built of the widest characters, which the request schemas accept at their maxLength', () => {
    expect(jsonBytesPerChar(WIDEST)).toBe(6);
    for (const char of ['x', '"', 'é', '€', '😀', '\ud800'])
      expect(jsonBytesPerChar(char)).toBeLessThanOrEqual(jsonBytesPerChar(WIDEST));
    const { room_name, user_id, agent_id, agent_name, outbound_phone_number, transferred_to } = session;
    expect(
      compileRequest({ body: sessionCreateBody })({ body: new Map(Object.entries({ room_name, user_id, agent_id })) }),
    ).toMatchObject({ ok: true });
    expect(
      compileRequest({ body: sessionUpdateBody })({
        body: new Map(Object.entries({ agent_name, outbound_phone_number, transferred_to })),
      }),
    ).toMatchObject({ ok: true });
  });

  it('has a Kafka record far below what one send to the broker takes', () => {
    const bytes = outgoingBytes({ topic: 'sessions', record: encodeRecord(sessionEnvelope(session, T0 + 3)) });
    expect(bytes).toBeGreaterThan(MAX_SESSION_DATA_BYTES + MAX_ANALYSIS_BYTES);
    // A quarter of the cap: room for the envelope to grow, and for other records in the same send.
    expect(bytes).toBeLessThan(DEFAULT_MAX_BATCH_BYTES / 4);
  });
});
