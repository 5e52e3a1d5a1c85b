import { randomUUID } from 'node:crypto';
import type { AuditRecord } from '../../../schemas/records/api-key.ts';
import type { Envelope } from '../../domain/records/index.ts';
import { makeEnvelope } from '../../domain/records/index.ts';
import type { Caller } from './access.ts';

export interface AuditEntry {
  readonly action: AuditRecord['action'];
  readonly subject_id: string;
  readonly actor: Caller;
  readonly user_id: string | null;
  readonly at: Date;
  /** The change (never a secret: a key's salt and hash are left out by the caller). */
  readonly detail: unknown;
}

/** The audit record of one administrative change, published with the change itself, under its key. */
export function auditEnvelope(entry: AuditEntry, key: string): Envelope {
  const id = randomUUID();
  const record: AuditRecord = {
    id,
    action: entry.action,
    subject_id: entry.subject_id,
    actor_key_id: entry.actor.id,
    user_id: entry.user_id,
    at: entry.at.toISOString(),
    detail: JSON.stringify(entry.detail),
  };
  return makeEnvelope('audit', key, record, entry.at, entry.at, id);
}
