import { sessionResponseSchema } from '../../../schemas/http/responses.ts';
import type { WireOf } from '../../../schemas/http/response-parts.ts';
import { toSessionRecord } from './session-shape.ts';
import type { CallDirection, JsonObject, Session } from './session.ts';

/**
 * The Session object of the wire (interface.md §2.1): the record's fields but `version`, and two names
 * the old dashboard reads (`direction`, call_direction in lower case; `metadata`, session_data again).
 * Key order is part of the contract (compat.md): that of sessionResponseSchema.
 */
export type SessionResponse = WireOf<typeof sessionResponseSchema>;

const RESPONSE_FIELDS = Object.keys(sessionResponseSchema.properties) as readonly (keyof SessionResponse)[];

export function toSessionResponse(session: Session): SessionResponse {
  const wire: SessionResponse = {
    ...toSessionRecord(session),
    analysis: session.analysis ?? analysisFromData(session.session_data),
    direction:
      session.call_direction === null ? null : (session.call_direction.toLowerCase() as Lowercase<CallDirection>),
    metadata: session.session_data,
  };
  return Object.fromEntries(RESPONSE_FIELDS.map((field) => [field, wire[field]])) as SessionResponse;
}

/** GET /api/sessions/{id}/analysis as the old service answered it: the analysis, or null. */
export function sessionAnalysis(session: Session): unknown {
  return session.analysis ?? session.session_data.analysis ?? null;
}

// Workers of the old service put the post-call analysis inside session_data; the dashboard reads `analysis`.
function analysisFromData(data: JsonObject): JsonObject | null {
  const analysis = data.analysis;
  return typeof analysis === 'object' && analysis !== null && !Array.isArray(analysis)
    ? (analysis as JsonObject)
    : null;
}
