import { sessionRecordSchema, type SessionField, type SessionRecord } from '../../../schemas/records/session.ts';
import type { JsonObject, Session } from './session.ts';

/**
 * What each session field is, read off its schema (schemas/records/session.ts): the mappings of the
 * session (record, response, history row, a new session) loop over these instead of naming fields, so
 * a new field needs only its schema, its migration and, if it is not nullable, its value in newSession.
 */
export type FieldKind = 'date-time' | 'object' | 'integer' | 'uuid' | 'value';

interface FieldSchema {
  readonly type?: string | readonly string[];
  readonly format?: string;
  readonly enum?: readonly unknown[];
}

const PROPERTIES: Readonly<Record<SessionField, FieldSchema>> = sessionRecordSchema.properties;

/** Every field, in the order of the schema. */
export const SESSION_FIELDS = Object.keys(PROPERTIES) as readonly SessionField[];

export function fieldKind(field: SessionField): FieldKind {
  const { format } = PROPERTIES[field];
  if (format === 'date-time' || format === 'uuid') return format;
  const types = typesOf(field);
  if (types.includes('object')) return 'object';
  return types.includes('integer') ? 'integer' : 'value';
}

/** Every field null, in the order of the schema: what newSession fills in. */
export function blankSession(): Record<SessionField, null> {
  return Object.fromEntries(SESSION_FIELDS.map((field) => [field, null])) as Record<SessionField, null>;
}

/** The record form: datetimes as ISO text in UTC, the objects copied. */
export function toSessionRecord(session: Session): SessionRecord {
  return Object.fromEntries(
    SESSION_FIELDS.map((field) => [field, recordValue(field, session[field])]),
  ) as SessionRecord;
}

function recordValue(field: SessionField, value: Session[SessionField]): unknown {
  if (value === null) return null;
  const kind = fieldKind(field);
  // UTC with a "Z": a naive string would be read as local time by JavaScript's Date (compat.md).
  if (kind === 'date-time') return new Date(value as number).toISOString();
  return kind === 'object' ? { ...(value as JsonObject) } : value;
}

function typesOf(field: SessionField): readonly string[] {
  return [PROPERTIES[field].type ?? []].flat();
}
