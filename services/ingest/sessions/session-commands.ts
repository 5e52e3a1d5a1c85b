import { AppError } from '../../shared/errors.ts';
import {
  applySessionUpdate,
  endSessionByRoom,
  newSession,
  type JsonObject,
  type NewSessionInput,
  type Session,
  type SessionUpdate,
} from './session.ts';
import { MAX_JSON_BYTES, oversized, type BoundedJsonField, type OversizedField } from './session-limits.ts';
import { fillFromJoin, type RoomJoin } from './session-join.ts';
import type { SessionMutation, SessionStore, SessionUpdateOutcome } from './session-store.ts';

/**
 * What the session routes call: the pure rules run inside the store's atomic update, and the
 * outcomes become AppErrors with the details clients know (compat.md). `before` is null when
 * nothing changed, so a caller publishes a record only for a real change.
 */
export interface SessionChange {
  readonly session: Session;
  readonly before: Session | null;
}

export const SESSION_NOT_FOUND = 'Session not found';

/** newSession, refusing (422) session_data over MAX_SESSION_DATA_BYTES. */
export function newBoundedSession(input: NewSessionInput, nowMs: number): Session {
  const data = input.session_data ?? {};
  const tooLarge = oversized('session_data', data);
  if (tooLarge !== null) throw jsonTooLarge([{ ...tooLarge, key: 'session_data', input: data }]);
  return newSession(input, nowMs);
}

export async function getSession(store: SessionStore, id: string): Promise<Session> {
  const session = await store.get(id);
  if (session === null) throw AppError.of('NOT_FOUND', SESSION_NOT_FOUND);
  return session;
}

/** The room's latest session of this tenant (`userId`), or of any tenant when null. */
export async function getSessionByRoom(store: SessionStore, roomName: string, userId: string | null): Promise<Session> {
  const session = await store.getByRoom(roomName, userId);
  if (session === null) throw AppError.of('NOT_FOUND', SESSION_NOT_FOUND);
  return session;
}

/** Fills the room's live session with what a second create for the room brings (fillFromJoin). */
export async function joinSession(
  store: SessionStore,
  id: string,
  join: RoomJoin,
  nowMs: number,
): Promise<SessionChange> {
  return changeOf(
    await store.update(id, (current) => {
      const filled = fillFromJoin(current, join, nowMs);
      const tooLarge = filled === null ? null : oversized('session_data', filled.session_data);
      if (tooLarge !== null) throw jsonTooLarge([{ ...tooLarge, key: 'session_data', input: join.session_data }]);
      return filled;
    }),
  );
}

/** Throws NOT_FOUND for an unknown id and CONFLICT for a move the lifecycle forbids. */
export async function updateSession(
  store: SessionStore,
  id: string,
  update: SessionUpdate,
  nowMs: number,
): Promise<SessionChange> {
  return changeOf(await store.update(id, sessionMutation(update, nowMs)));
}

/** Ends the session if it is ACTIVE; any other status is returned unchanged. The service finds the room's latest first. */
export async function endSession(store: SessionStore, id: string, nowMs: number): Promise<SessionChange> {
  return changeOf(
    await store.update(id, (current) => {
      const ended = endSessionByRoom(current, nowMs);
      return ended === current ? null : ended;
    }),
  );
}

/** The store mutation of one client update; a forbidden move throws, so the store writes nothing. */
export function sessionMutation(update: SessionUpdate, nowMs: number): SessionMutation {
  return (current) => {
    const result = applySessionUpdate(current, update, nowMs);
    if (result.kind === 'conflict') throw AppError.of('CONFLICT', result.detail);
    if (result.kind === 'too_large') throw jsonTooLarge(result.fields.map((field) => sentAs(field, update)));
    return result.kind === 'changed' ? result.session : null;
  };
}

/** The PATCH key that sets each bounded field: metadata merges into session_data. */
const UPDATE_KEYS = { session_data: 'metadata', analysis: 'analysis' } as const satisfies Record<
  BoundedJsonField,
  keyof SessionUpdate
>;

/** An oversized field with the request key and value it came from. */
interface OversizedInput extends OversizedField {
  readonly key: string;
  readonly input: JsonObject | null | undefined;
}

function sentAs(field: OversizedField, update: SessionUpdate): OversizedInput {
  const key = UPDATE_KEYS[field.field];
  return { ...field, key, input: update[key] };
}

/** One pydantic `value_error` per field, at the key the client sent, as a validator raising ValueError would give it. */
function jsonTooLarge(fields: readonly OversizedInput[]): AppError {
  return AppError.validation(
    fields.map(({ field, bytes, key, input }) => {
      const reason = `${field} would be ${bytes} bytes as JSON, over the limit of ${MAX_JSON_BYTES[field]} bytes`;
      return { type: 'value_error', loc: ['body', key], msg: `Value error, ${reason}`, input, ctx: { error: {} } };
    }),
  );
}

function changeOf(outcome: SessionUpdateOutcome): SessionChange {
  if (outcome.kind === 'not_found') throw AppError.of('NOT_FOUND', SESSION_NOT_FOUND);
  return outcome.kind === 'changed'
    ? { session: outcome.after, before: outcome.before }
    : { session: outcome.session, before: null };
}
