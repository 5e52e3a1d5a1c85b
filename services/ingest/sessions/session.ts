import type {
  LiveSessionStatus,
  SessionField,
  SessionRecord,
  sessionRecordSchema,
} from '../../../schemas/records/session.ts';
import { blankSession } from './session-shape.ts';

export {
  CALL_DIRECTIONS,
  CALL_STATUSES,
  FINAL_SESSION_STATUSES,
  LIVE_SESSION_STATUSES,
  SESSION_STATUSES,
  TRANSFER_TYPES,
  type CallDirection,
  type CallStatus,
  type LiveSessionStatus,
  type SessionStatus,
  type TransferType,
} from '../../../schemas/records/session.ts';

export type JsonObject = Readonly<Record<string, unknown>>;

type Properties = typeof sessionRecordSchema.properties;
type DateTimeField = {
  [K in SessionField]: Properties[K] extends { readonly format: 'date-time' } ? K : never;
}[SessionField];
type DomainValue<K extends SessionField, V> = K extends DateTimeField
  ? null extends V
    ? number | null
    : number
  : [Exclude<V, null>] extends [Record<string, unknown>]
    ? null extends V
      ? JsonObject | null
      : JsonObject
    : V;

/**
 * A voice session as the ingest service holds it live: the session record (schemas/records/session.ts)
 * with its datetimes as epoch milliseconds, so that comparisons and durations never parse strings; the
 * wire form is made by toSessionResponse.
 */
export type Session = { readonly [K in SessionField]: DomainValue<K, SessionRecord[K]> };

export interface NewSessionInput {
  readonly id: string;
  readonly room_name: string;
  readonly user_id: string;
  readonly agent_id?: string | null;
  readonly session_data?: JsonObject;
  /** CREATED is a session made before the call connects; ACTIVE (the default) is a call in progress. */
  readonly status?: LiveSessionStatus;
}

/** Every field not set here starts null. */
export function newSession(input: NewSessionInput, nowMs: number): Session {
  const status = input.status ?? 'ACTIVE';
  return {
    ...blankSession(),
    id: input.id,
    room_name: input.room_name,
    status,
    started_at: status === 'ACTIVE' ? nowMs : null,
    user_id: input.user_id,
    agent_id: input.agent_id ?? null,
    session_data: input.session_data ?? {},
    created_at: nowMs,
    updated_at: nowMs,
    version: 1,
  };
}

// The pure rules live in their own files; they are re-exported so callers import one module.
export {
  applySessionUpdate,
  endSessionByRoom,
  isFinalStatus,
  type SessionUpdate,
  type SessionUpdateResult,
} from './session-update.ts';
export { toSessionResponse, type SessionResponse } from './session-response.ts';
