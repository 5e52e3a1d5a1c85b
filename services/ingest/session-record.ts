import type { SessionRecord } from '../shared/records/payloads.ts';
import { makeEnvelope, type Envelope } from '../shared/records/envelope.ts';
import type { Session } from './sessions/session.ts';

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The record of one version of a session; keyed by session id so its versions stay in order. */
export function sessionEnvelope(session: Session, receivedAtMs: number): Envelope {
  const record: SessionRecord = {
    ...session,
    session_data: { ...session.session_data },
    analysis: session.analysis === null ? null : { ...session.analysis },
    started_at: iso(session.started_at),
    ended_at: iso(session.ended_at),
    transfer_timestamp: iso(session.transfer_timestamp),
    created_at: new Date(session.created_at).toISOString(),
    updated_at: new Date(session.updated_at).toISOString(),
  };
  return makeEnvelope('session', session.id, record, new Date(session.updated_at), new Date(receivedAtMs));
}
