import { sessionUpdateBody, type SessionUpdateBody } from '../../../schemas/http/session-update.ts';
import {
  FINAL_SESSION_STATUSES,
  MAX_DURATION_SECONDS,
  SESSION_STATUSES,
  type SessionField,
} from '../../../schemas/records/session.ts';
import { SESSION_FIELDS } from './session-shape.ts';
import type { JsonObject, Session, SessionStatus } from './session.ts';
import { oversized, type OversizedField } from './session-limits.ts';

// The fields a PATCH sets as given (schemas/http/session-update.ts); status and metadata go through the rules.
type GivenField = Extract<Exclude<keyof SessionUpdateBody, 'status' | 'metadata'>, SessionField>;

/** A change asked for by a client. Absent keys keep their value; null clears a nullable field. */
export type SessionUpdate = {
  readonly status?: SessionStatus;
  /** Merged shallowly into session_data: a key given here replaces that key only. */
  readonly metadata?: JsonObject;
} & { readonly [K in GivenField]?: Session[K] };

const GIVEN_FIELDS = SESSION_FIELDS.filter(
  (field) => field !== 'status' && Object.hasOwn(sessionUpdateBody.properties, field),
) as GivenField[];

export type SessionUpdateResult =
  | { readonly kind: 'changed'; readonly session: Session }
  | { readonly kind: 'unchanged' }
  | { readonly kind: 'conflict'; readonly detail: string }
  /** The merged session_data or the new analysis would pass its bound (session-limits.ts), in that order. */
  | { readonly kind: 'too_large'; readonly fields: readonly OversizedField[] };

// A session moves forward along SESSION_STATUSES (lifecycle order) and a final status is final: a late
// or replayed update must not reopen a call that was billed as ended.
function isAllowedMove(from: SessionStatus, to: SessionStatus): boolean {
  return !isFinalStatus(from) && SESSION_STATUSES.indexOf(to) > SESSION_STATUSES.indexOf(from);
}

export function isFinalStatus(status: SessionStatus): boolean {
  return (FINAL_SESSION_STATUSES as readonly SessionStatus[]).includes(status);
}

export function applySessionUpdate(session: Session, update: SessionUpdate, nowMs: number): SessionUpdateResult {
  const target = update.status ?? session.status;
  if (target !== session.status && !isAllowedMove(session.status, target)) {
    return { kind: 'conflict', detail: `Cannot change session status from ${session.status} to ${target}` };
  }
  const next = moveTo(withFields(session, update), target, update, nowMs);
  // Only a real change is a new revision, so a retried or empty PATCH leaves updated_at alone.
  if (sameContent(session, next)) return { kind: 'unchanged' };
  const fields = oversizedFields(next, update);
  if (fields.length > 0) return { kind: 'too_large', fields };
  return { kind: 'changed', session: { ...next, updated_at: nowMs, version: session.version + 1 } };
}

/** Workers call this when the room closes; only a call in progress is ended by it. */
export function endSessionByRoom(session: Session, nowMs: number): Session {
  if (session.status !== 'ACTIVE') return session;
  const result = applySessionUpdate(session, { status: 'COMPLETED' }, nowMs);
  return result.kind === 'changed' ? result.session : session;
}

// Only what the update sets is measured, so a session stored before a bound existed still takes other changes.
function oversizedFields(next: Session, update: SessionUpdate): OversizedField[] {
  const sessionData = update.metadata === undefined ? null : oversized('session_data', next.session_data);
  const analysis = update.analysis == null ? null : oversized('analysis', update.analysis);
  return [sessionData, analysis].filter((field) => field !== null);
}

function withFields(session: Session, update: SessionUpdate): Session {
  const given = GIVEN_FIELDS.filter((field) => update[field] !== undefined);
  return {
    ...session,
    ...Object.fromEntries(given.map((field) => [field, update[field]])),
    session_data:
      update.metadata === undefined ? session.session_data : { ...session.session_data, ...update.metadata },
  };
}

function moveTo(session: Session, target: SessionStatus, update: SessionUpdate, nowMs: number): Session {
  if (target === session.status) return withEndMoved(session, update);
  if (!isFinalStatus(target)) return { ...session, status: target, started_at: session.started_at ?? nowMs };
  const ended_at = update.ended_at ?? nowMs;
  const duration = update.duration ?? elapsedSeconds(session.started_at, ended_at);
  return { ...session, status: target, ended_at, duration };
}

// A moved end of an ended call moves its duration with it, unless the update gives one: the duration
// stays the one the end says, in the live store and the history alike.
function withEndMoved(session: Session, update: SessionUpdate): Session {
  if (!isFinalStatus(session.status) || update.ended_at == null || update.duration !== undefined) return session;
  return { ...session, duration: elapsedSeconds(session.started_at, update.ended_at) };
}

// Clamped at zero: a worker clock that runs behind can send an ended_at before started_at. Clamped at
// MAX_DURATION_SECONDS, which ended_at's window keeps far off, so that no instant can make it wrap.
function elapsedSeconds(startedAt: number | null, endedAt: number): number {
  if (startedAt === null) return 0;
  return Math.min(MAX_DURATION_SECONDS, Math.max(0, Math.floor((endedAt - startedAt) / 1000)));
}

function sameContent(before: Session, after: Session): boolean {
  return deepEqual({ ...before, updated_at: 0, version: 0 }, { ...after, updated_at: 0, version: 0 });
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const left = a as Record<string, unknown>;
  const right = b as Record<string, unknown>;
  const keys = Object.keys(left);
  if (keys.length !== Object.keys(right).length) return false;
  return keys.every((key) => Object.hasOwn(right, key) && deepEqual(left[key], right[key]));
}
