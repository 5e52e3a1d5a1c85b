/**
 * A voice session as the ingest service holds it live. Datetimes are epoch milliseconds so that
 * comparisons and durations never parse strings; the wire form is made by toSessionResponse.
 */
export const SESSION_STATUSES = ['CREATED', 'ACTIVE', 'COMPLETED', 'FAILED'] as const;
export type SessionStatus = (typeof SESSION_STATUSES)[number];

export const CALL_DIRECTIONS = ['INBOUND', 'OUTBOUND'] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];

export const CALL_STATUSES = ['RINGING', 'ANSWERED', 'COMPLETED', 'FAILED', 'NO_ANSWER'] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];

export const TRANSFER_TYPES = ['WARM', 'COLD'] as const;
export type TransferType = (typeof TRANSFER_TYPES)[number];

export type JsonObject = Readonly<Record<string, unknown>>;

export interface Session {
  readonly id: string;
  readonly room_name: string;
  readonly status: SessionStatus;
  readonly started_at: number | null;
  readonly ended_at: number | null;
  /** Whole seconds. */
  readonly duration: number | null;
  readonly user_id: string;
  readonly agent_id: string | null;
  readonly session_data: JsonObject;
  readonly agent_name: string | null;
  readonly call_direction: CallDirection | null;
  readonly outbound_phone_number: string | null;
  readonly call_status: CallStatus | null;
  readonly analysis: JsonObject | null;
  readonly transferred_to: string | null;
  readonly transfer_type: TransferType | null;
  readonly transfer_timestamp: number | null;
  readonly created_at: number;
  readonly updated_at: number;
  /** Starts at 1 and grows by one with every change; stores compare it to detect lost updates. */
  readonly version: number;
}

export interface NewSessionInput {
  readonly id: string;
  readonly room_name: string;
  readonly user_id: string;
  readonly agent_id?: string | null;
  readonly session_data?: JsonObject;
  /** CREATED is a session made before the call connects; ACTIVE (the default) is a call in progress. */
  readonly status?: 'CREATED' | 'ACTIVE';
}

export function newSession(input: NewSessionInput, nowMs: number): Session {
  const status = input.status ?? 'ACTIVE';
  return {
    id: input.id,
    room_name: input.room_name,
    status,
    started_at: status === 'ACTIVE' ? nowMs : null,
    ended_at: null,
    duration: null,
    user_id: input.user_id,
    agent_id: input.agent_id ?? null,
    session_data: input.session_data ?? {},
    agent_name: null,
    call_direction: null,
    outbound_phone_number: null,
    call_status: null,
    analysis: null,
    transferred_to: null,
    transfer_type: null,
    transfer_timestamp: null,
    created_at: nowMs,
    updated_at: nowMs,
    version: 1,
  };
}

// The pure rules live in their own files; they are re-exported so callers import one module.
export { applySessionUpdate, endSessionByRoom, isFinalStatus, type SessionUpdate, type SessionUpdateResult } from './session-update.ts';
export { toSessionResponse, type SessionResponse } from './session-response.ts';
