import { makeEnvelope, type Envelope } from '../../domain/records/index.ts';
import { toSessionRecord } from './session-shape.ts';
import type { Session } from './session.ts';

/** The record of one version of a session; keyed by session id so its versions stay in order. */
export function sessionEnvelope(session: Session, receivedAtMs: number): Envelope {
  return makeEnvelope(
    'session',
    session.id,
    toSessionRecord(session),
    new Date(session.updated_at),
    new Date(receivedAtMs),
  );
}
