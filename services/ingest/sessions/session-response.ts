import type { CallDirection, CallStatus, JsonObject, Session, SessionStatus, TransferType } from './session.ts';

/** The Session object of the wire (interface.md §2.1). Key order is part of the contract (compat.md). */
export interface SessionResponse {
  readonly room_name: string;
  readonly session_data: JsonObject;
  readonly id: string;
  readonly status: SessionStatus;
  readonly started_at: string | null;
  readonly ended_at: string | null;
  readonly duration: number | null;
  readonly user_id: string;
  readonly agent_id: string | null;
  readonly agent_name: string | null;
  readonly call_direction: CallDirection | null;
  readonly outbound_phone_number: string | null;
  readonly call_status: CallStatus | null;
  readonly analysis: JsonObject | null;
  readonly transferred_to: string | null;
  readonly transfer_type: TransferType | null;
  readonly transfer_timestamp: string | null;
  readonly created_at: string;
  readonly updated_at: string;
  /** call_direction in lower case, as the old dashboard's VoiceSession type reads it. */
  readonly direction: Lowercase<CallDirection> | null;
  /** session_data under the name of the old create body and dashboard type. */
  readonly metadata: JsonObject;
}

export function toSessionResponse(session: Session): SessionResponse {
  return {
    room_name: session.room_name,
    session_data: session.session_data,
    id: session.id,
    status: session.status,
    started_at: isoOrNull(session.started_at),
    ended_at: isoOrNull(session.ended_at),
    duration: session.duration,
    user_id: session.user_id,
    agent_id: session.agent_id,
    agent_name: session.agent_name,
    call_direction: session.call_direction,
    outbound_phone_number: session.outbound_phone_number,
    call_status: session.call_status,
    analysis: session.analysis ?? analysisFromData(session.session_data),
    transferred_to: session.transferred_to,
    transfer_type: session.transfer_type,
    transfer_timestamp: isoOrNull(session.transfer_timestamp),
    created_at: iso(session.created_at),
    updated_at: iso(session.updated_at),
    direction: session.call_direction === null ? null : (session.call_direction.toLowerCase() as Lowercase<CallDirection>),
    metadata: session.session_data,
  };
}

/** GET /api/sessions/{id}/analysis as the old service answered it: the analysis, or null. */
export function sessionAnalysis(session: Session): unknown {
  return session.analysis ?? session.session_data.analysis ?? null;
}

// Workers of the old service put the post-call analysis inside session_data; the dashboard reads `analysis`.
function analysisFromData(data: JsonObject): JsonObject | null {
  const analysis = data.analysis;
  return typeof analysis === 'object' && analysis !== null && !Array.isArray(analysis) ? (analysis as JsonObject) : null;
}

// UTC with a "Z": a naive string would be read as local time by JavaScript's Date (compat.md).
function iso(ms: number): string {
  return new Date(ms).toISOString();
}

function isoOrNull(ms: number | null): string | null {
  return ms === null ? null : iso(ms);
}
